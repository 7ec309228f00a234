import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { connectRedis, type RedisConnection } from '#contract';
import { Controller } from './controller/controller.ts';
import { KubeClient } from './kube/client.ts';
import { EventRecorder } from './kube/events.ts';
import { Informer } from './kube/informer.ts';
import { LeaderElector } from './leader/lease.ts';
import { OperatorMetrics, startMetricsServer } from './metrics.ts';
import { SnapshotPublisher } from './publish/redis-publisher.ts';
import { GROUP, VERSION } from './resources/common.ts';
import { KINDS, type SwitchyardKind } from './resources/index.ts';

export interface OperatorOptions {
  kubeConfig: KubeConfig;
  /** The Redis (or Redis Cluster) gateways follow: snapshots are published and spend is read there. */
  redis: RedisConnection;
  sealKey: Buffer;
  logger: Logger;
  identity: string;
  leaseNamespace: string;
  leaseName?: string;
  watchNamespace?: string;
  metricsPort?: number;
  metricsHost?: string;
  spendRefreshMs?: number;
  /** How often every MCPServer is probed again (a changed one is probed at once). */
  mcpProbeMs?: number;
  resyncMs?: number;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  leaseRetryMs?: number;
}

export interface RunningOperator {
  metricsUrl: string;
  /** Resolves once every informer's cache holds the cluster's objects. */
  synced: Promise<void>;
  metrics: OperatorMetrics;
  controller: Controller;
  informers: Record<SwitchyardKind | 'Secret', Informer>;
  elector: LeaderElector;
  readonly isLeader: boolean;
  /** Clean shutdown: stop work, release the Lease at once, close connections. */
  stop(): Promise<void>;
  /** Like a crash: stop everything but leave the Lease held until it expires. */
  abort(): Promise<void>;
}

const collectionPath = (group: string, version: string, plural: string, ns?: string): string => {
  const base = group ? `/apis/${group}/${version}` : `/api/${version}`;
  return ns ? `${base}/namespaces/${encodeURIComponent(ns)}/${plural}` : `${base}/${plural}`;
};

/** Wires informers, controller, publisher, leader election and the metrics server together. */
export async function startOperator(o: OperatorOptions): Promise<RunningOperator> {
  const logger = o.logger;
  const client = new KubeClient(o.kubeConfig);
  const metrics = new OperatorMetrics();
  const redis = connectRedis(o.redis, {
    lazyConnect: true,
    maxRetriesPerRequest: 2,
    connectionName: 'switchyard-operator',
  });
  redis.on('error', (err: Error) => logger.warn({ msg: 'redis connection problem', err: err.message }));
  await redis
    .connect()
    .catch((err: Error) => logger.warn({ msg: 'redis not reachable yet', err: err.message }));
  const events = new EventRecorder(client, logger, o.identity);
  const informers = {} as Record<SwitchyardKind | 'Secret', Informer>;
  let controller: Controller | undefined;
  const make = (kind: SwitchyardKind | 'Secret', path: string) =>
    new Informer({
      client,
      path,
      name: kind,
      logger,
      resyncMs: o.resyncMs ?? 300_000,
      handler: (event, obj, old) => controller?.onEvent(kind, event, obj, old),
    });
  for (const k of KINDS)
    informers[k.info.kind as SwitchyardKind] = make(
      k.info.kind as SwitchyardKind,
      collectionPath(GROUP, VERSION, k.info.plural, o.watchNamespace),
    );
  informers.Secret = make('Secret', collectionPath('', 'v1', 'secrets', o.watchNamespace));
  controller = new Controller({
    client,
    informers,
    publisher: new SnapshotPublisher(redis),
    redis,
    sealKey: o.sealKey,
    metrics,
    logger,
    events,
    spendRefreshMs: o.spendRefreshMs ?? 2000,
    ...(o.mcpProbeMs ? { mcpProbeMs: o.mcpProbeMs } : {}),
  });
  const ctl = controller;
  for (const inf of Object.values(informers)) inf.start();

  let synced = false;
  const syncAll = Promise.all(Object.values(informers).map((i) => i.waitForSync())).then(() => {
    synced = true;
    logger.info({ msg: 'informer caches synced' });
  });

  let wantLead = false;
  const elector = new LeaderElector({
    client,
    namespace: o.leaseNamespace,
    name: o.leaseName ?? 'switchyard-operator',
    identity: o.identity,
    logger,
    ...(o.leaseDurationMs ? { leaseDurationMs: o.leaseDurationMs } : {}),
    ...(o.renewDeadlineMs ? { renewDeadlineMs: o.renewDeadlineMs } : {}),
    ...(o.leaseRetryMs ? { retryMs: o.leaseRetryMs } : {}),
    onStartedLeading: () => {
      wantLead = true;
      metrics.leader.set(1);
      logger.info({ msg: 'became leader', identity: o.identity });
      // Only publish from complete caches: a half-synced cache would publish a partial snapshot.
      void syncAll.then(() => {
        if (wantLead) ctl.start();
      });
    },
    onStoppedLeading: () => {
      wantLead = false;
      metrics.leader.set(0);
      logger.info({ msg: 'stopped leading', identity: o.identity });
      void ctl.stop();
    },
  });
  elector.start();

  const server = await startMetricsServer(
    metrics,
    { healthy: () => true, ready: () => synced },
    o.metricsPort ?? 9091,
    o.metricsHost ?? '0.0.0.0',
  );
  logger.info({
    msg: 'operator started',
    identity: o.identity,
    metrics: server.url,
    namespace: o.watchNamespace ?? '(all)',
  });

  let closed = false;
  const shutdown = async (release: boolean) => {
    if (closed) return;
    closed = true;
    await elector.stop({ release });
    logger.debug({ msg: 'shutdown: elector stopped' });
    await ctl.stop();
    logger.debug({ msg: 'shutdown: controller stopped' });
    await Promise.all(Object.values(informers).map((i) => i.stop()));
    logger.debug({ msg: 'shutdown: informers stopped' });
    await server.close();
    redis.disconnect();
  };
  return {
    metricsUrl: server.url,
    metrics,
    controller: ctl,
    synced: syncAll,
    informers,
    elector,
    get isLeader() {
      return elector.isLeader;
    },
    stop: () => shutdown(true),
    abort: () => shutdown(false),
  };
}
