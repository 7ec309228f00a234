import pino from 'pino';
import { parseSealKey, releaseStartupMemory } from '#contract';
import { ConfigError, readOperatorEnv } from './env.ts';
import { KubeClient, loadKubeConfig } from './kube/client.ts';
import { startOperator } from './operator.ts';

// The operator process: thin on purpose; the logic lives in operator.ts and the modules it wires.
let env: ReturnType<typeof readOperatorEnv>;
try {
  env = readOperatorEnv();
} catch (err) {
  process.stderr.write(`switchyard-operator: ${(err as Error).message}\n`);
  process.exit(2);
}
const logger = pino({ level: env.LOG_LEVEL, base: { service: 'switchyard-operator' } });
const kubeConfig = loadKubeConfig(env.KUBECONFIG);

async function sealKeyFromEnv(): Promise<Buffer> {
  if (env.SWITCHYARD_SEAL_KEY) return parseSealKey(env.SWITCHYARD_SEAL_KEY);
  const [ref = '', field = 'sealKey'] = (env.SWITCHYARD_SEAL_KEY_SECRET ?? '').split(':');
  const [ns, name] = ref.split('/');
  const secret: { data?: Record<string, string> } = await new KubeClient(kubeConfig).request(
    'GET',
    `/api/v1/namespaces/${ns}/secrets/${name}`,
  );
  const b64 = secret.data?.[field];
  if (!b64) throw new ConfigError(`Secret ${ref} has no key "${field}"`);
  return parseSealKey(Buffer.from(b64, 'base64').toString('utf8').trim());
}

let sealKey: Buffer;
try {
  sealKey = await sealKeyFromEnv();
} catch (err) {
  logger.fatal({ msg: 'cannot load the seal key', err: (err as Error).message });
  process.exit(2);
}

const operator = await startOperator({
  kubeConfig,
  redis: env.redis,
  sealKey,
  logger,
  identity: env.identity,
  leaseNamespace: env.leaseNamespace,
  leaseName: env.LEASE_NAME,
  ...(env.WATCH_NAMESPACE ? { watchNamespace: env.WATCH_NAMESPACE } : {}),
  metricsPort: env.METRICS_PORT,
  metricsHost: env.METRICS_HOST,
  spendRefreshMs: env.SPEND_REFRESH_MS,
  mcpProbeMs: env.MCP_PROBE_MS,
  resyncMs: env.RESYNC_MS,
});
// Listing the cluster's objects grew the young generation; an idle operator need not keep it.
void operator.synced.then(releaseStartupMemory);

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    logger.info({ msg: `${signal}: releasing the Lease and stopping` });
    operator.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
