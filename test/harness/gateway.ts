import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { stringify } from 'yaml';
import { createGateway, type Gateway, type GatewayOptions } from '#gateway/gateway';
import { SnapshotStore } from '#gateway/snapshot/store';
import { createRuntimeState } from '#gateway/state/index';
import { type CompiledFolder, loadInto } from '../../embedded/config-source.ts';

export interface RunningGateway {
  url: string;
  metricsUrl: string;
  gateway: Gateway;
  store: SnapshotStore;
  compiled: CompiledFolder;
  /** Replace the config with new manifests and recompile (what an operator publish does). */
  reconfigure(manifests: readonly object[]): Promise<CompiledFolder>;
  close(): Promise<void>;
}

/**
 * Starts a real gateway (both ports, real sockets) on free ports from Kubernetes manifests, through
 * the same loader and compiler embedded mode uses.
 */
export interface StartOptions
  extends Pick<
    GatewayOptions,
    'state' | 'now' | 'async' | 'http' | 'tracing' | 'console' | 'consoleWeb' | 'mcp'
  > {
  /** Keep runtime state on this Redis (and wait until it is connected); in memory when unset. */
  redisUrl?: string | undefined;
}

export async function startGateway(
  manifests: readonly object[],
  { redisUrl, ...opts }: StartOptions = {},
): Promise<RunningGateway> {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-gw-'));
  const sealKey = randomBytes(32);
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const store = new SnapshotStore(sealKey);
  const write = async (list: readonly object[]) => {
    await writeFile(join(dir, 'config.yaml'), list.map((m) => stringify(m)).join('---\n'));
    return loadInto(dir, store, sealKey, logger);
  };
  const compiled = await write(manifests);
  const gateway = createGateway(store, {
    logger,
    ...(redisUrl
      ? {
          state: (metrics, log) =>
            createRuntimeState({ redis: { url: redisUrl }, registry: metrics.registry, logger: log }),
        }
      : {}),
    ...opts,
  });
  await (gateway.state as { whenReady?: () => Promise<void> }).whenReady?.();
  const { url, metricsUrl } = await gateway.listen('127.0.0.1', 0, 0);
  return {
    url,
    metricsUrl,
    gateway,
    store,
    compiled,
    reconfigure: write,
    async close() {
      await gateway.close(1000);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
