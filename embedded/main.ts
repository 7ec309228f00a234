import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { parseSealKey, redisConnectionFromEnv } from '#contract';
import { createGateway, createRuntimeState, readGatewayEnv, SnapshotStore } from '#gateway';
import { FolderConsoleBackend, readConsoleEnv } from '#gateway/console/index';
import { consoleWebFromEnv } from '#gateway/console-web/index';
import { startTracing } from '#gateway/tracing/index';
import { startBanner } from './banner.ts';
import { loadInto, watchFolder } from './config-source.ts';
import { EmbeddedDemoServers } from './demo-servers.ts';
import { connectRedisMode } from './redis-mode.ts';

// Embedded mode: one process reads CR YAML from a folder, compiles the snapshot in-process and
// serves the gateway. No cluster, no Redis (runtime state stays in memory).
const { values } = parseArgs({
  options: {
    config: { type: 'string', default: 'examples' },
    port: { type: 'string' },
    'metrics-port': { type: 'string' },
  },
});
const env = readGatewayEnv();
const logger = pino({ level: env.LOG_LEVEL, base: { service: 'switchyard-gateway', mode: 'embedded' } });
// OpenTelemetry traces when OTEL_EXPORTER_OTLP_ENDPOINT is set (the SDK is loaded only then).
const tracing = await startTracing(process.env, logger).catch((err: unknown) => {
  process.stderr.write(`switchyard: ${(err as Error).message}\n`);
  process.exit(2);
});
const dir = resolve(values.config ?? 'examples');
// The seal key only protects the in-process snapshot here, so a fresh one per run is enough.
const sealKey = env.SWITCHYARD_SEAL_KEY ? parseSealKey(env.SWITCHYARD_SEAL_KEY) : randomBytes(32);
const store = new SnapshotStore(sealKey);
// With REDIS_URL (or REDIS_CLUSTER_NODES) the compiled snapshot goes through Redis exactly as the
// operator publishes it, and the gateway follows it from there (what `make bench` measures).
const connection = redisConnectionFromEnv();
const redis = connection ? await connectRedisMode(connection, store, logger) : undefined;
// MCPServers annotated as demo servers are served here, on loopback, before the first compile.
const demo = new EmbeddedDemoServers(logger);
const first = await loadInto(dir, redis?.sink ?? store, sealKey, logger, demo);
await redis?.source.refresh();
const reload = () =>
  loadInto(dir, redis?.sink ?? store, sealKey, logger, demo).then(async (compiled) => {
    await redis?.source.refresh();
    return compiled;
  });
// The console API writes one YAML file per workflow into the folder (SWITCHYARD_CONSOLE=off: none).
const consoleMode = readConsoleEnv().SWITCHYARD_CONSOLE ?? 'folder';
// Runtime state follows the same choice: Redis (or Redis Cluster) when configured, memory without.
const gateway = createGateway(store, {
  logger,
  tracing,
  ...(consoleMode === 'folder' ? { console: new FolderConsoleBackend({ dir, reload }) } : {}),
  // The web console (make console builds it) beside the API, off with SWITCHYARD_CONSOLE=off.
  ...(consoleMode !== 'off' ? { consoleWeb: consoleWebFromEnv() } : {}),
  ...(connection
    ? {
        state: (metrics, log) =>
          createRuntimeState({
            redis: connection,
            registry: metrics.registry,
            logger: log,
            flushMs: env.SWITCHYARD_STATE_FLUSH_MS,
          }),
      }
    : {}),
});
const port = values.port !== undefined ? Number(values.port) : env.SWITCHYARD_PORT;
const metricsPort =
  values['metrics-port'] !== undefined ? Number(values['metrics-port']) : env.SWITCHYARD_METRICS_PORT;
const { url, metricsUrl } = await gateway.listen(env.SWITCHYARD_HOST, port, metricsPort);
// Listening on 0.0.0.0 reports the first interface; localhost is what a person on this machine types.
const local = (u: string) => `http://localhost:${new URL(u).port}`;
// A one-time link signs the first browser that opens it in to the console (with a console key).
const link = await gateway.consoleWeb?.oneTimeLink();
process.stdout.write(
  startBanner(
    local(url),
    local(metricsUrl),
    values.config ?? 'examples',
    first.loaded,
    first.verdicts,
    {
      served: gateway.consoleWeb !== undefined,
      link,
    },
    demo.urls(),
  ),
);
const stopWatching = watchFolder(dir, reload, logger);

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    logger.info({ msg: `${signal}: finishing in-flight requests` });
    stopWatching();
    // Backstop: the stop is bounded step by step; nothing may hold the process past its grace period.
    setTimeout(() => process.exit(1), env.SWITCHYARD_SHUTDOWN_GRACE_MS + 2000).unref();
    Promise.all([gateway.close(env.SWITCHYARD_SHUTDOWN_GRACE_MS), demo.close()]).then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
