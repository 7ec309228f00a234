import type { Server } from 'node:http';
import type { Logger } from 'pino';
import type { GatewayMetrics } from '../observability/metrics.ts';
import type { PipelineStages } from '../pipeline/stages.ts';
import type { SnapshotStore } from '../snapshot/store.ts';
import type { RuntimeState } from '../state/types.ts';
import { WebhookDispatcher } from '../webhooks/dispatcher.ts';
import { MemoryWebhookStore, RedisWebhookStore } from '../webhooks/store.ts';
import { SocketServer } from '../ws/server.ts';
import { BullJobRunner } from './bullmq-runner.ts';
import { MemoryResultBus, RedisResultBus, type ResultBus } from './bus.ts';
import { MemoryChannelStore } from './channels.ts';
import { type AsyncConfig, asyncConfigFromEnv } from './config.ts';
import { MemoryJobRunner } from './memory-runner.ts';
import { RedisChannelStore } from './redis-channels.ts';
import type { JobRunner } from './runner.ts';
import { AsyncService } from './service.ts';
import { MemoryTokenStore, RedisTokenStore } from './tokens.ts';

export interface AsyncFeatureDeps {
  store: SnapshotStore;
  state: RuntimeState;
  stages: PipelineStages;
  metrics: GatewayMetrics;
  logger: Logger;
  now: () => number;
  /** Overrides of the environment's settings (tests). */
  config?: Partial<AsyncConfig> | undefined;
}

export interface AsyncFeature {
  service: AsyncService;
  webhooks: WebhookDispatcher;
  runner: JobRunner;
  bus: ResultBus;
  sockets: SocketServer;
}

// One feature per runtime state (one per gateway): the routes (app.ts) and the workers
// (gateway.ts) reach the same instance without threading it through the app's options.
const features = new WeakMap<RuntimeState, AsyncFeature>();

export function asyncFeature(deps: AsyncFeatureDeps): AsyncFeature {
  const found = features.get(deps.state);
  if (found) return found;
  const config = { ...asyncConfigFromEnv(), ...deps.config };
  const redis = deps.state.redis;
  const runner: JobRunner = redis
    ? new BullJobRunner(redis, {
        logger: deps.logger,
        now: deps.now,
        concurrency: config.concurrency,
        lockMs: config.lockMs,
      })
    : new MemoryJobRunner({ now: deps.now, logger: deps.logger, concurrency: config.concurrency });
  const bus: ResultBus = redis ? new RedisResultBus(redis, deps.logger) : new MemoryResultBus();
  const channels = redis ? new RedisChannelStore(redis) : new MemoryChannelStore(deps.now);
  const tokens = redis ? new RedisTokenStore(redis) : new MemoryTokenStore(deps.now);
  const webhooks = new WebhookDispatcher({
    snapshots: deps.store,
    runner,
    store: redis ? new RedisWebhookStore(redis) : new MemoryWebhookStore(),
    state: deps.state,
    registry: deps.metrics.registry,
    logger: deps.logger,
    now: deps.now,
  });
  const service = new AsyncService({
    snapshots: deps.store,
    stages: deps.stages,
    settle: {
      metrics: deps.metrics,
      state: deps.state,
      now: deps.now,
      infoEnabled: () => deps.logger.isLevelEnabled('info'),
    },
    logger: deps.logger,
    now: deps.now,
    config,
    channels,
    tokens,
    runner,
    bus,
    webhooks,
  });
  const sockets = new SocketServer({
    tokens,
    channels,
    bus,
    logger: deps.logger,
    registry: deps.metrics.registry,
  });
  const feature = { service, webhooks, runner, bus, sockets };
  features.set(deps.state, feature);
  return feature;
}

/**
 * The webhook dispatcher of the gateway that owns `state`, for features that emit events of their
 * own (spend caps: `webhooksFor(deps.state)?.emitFor(projectId, 'budget.threshold', payload, id)`).
 */
export function webhooksFor(state: RuntimeState): WebhookDispatcher | undefined {
  return features.get(state)?.webhooks;
}

export interface Workers {
  feature: AsyncFeature;
  /** SIGTERM, before the HTTP server closes: sockets get 1012 so clients reconnect elsewhere. */
  drain(): Promise<void>;
  /** After in-flight requests finished: workers finish their active jobs, then everything closes. */
  close(): Promise<void>;
}

/** The gateway's job and webhook workers and its WebSocket endpoint (gateway.ts calls this once). */
export function startWorkers(deps: AsyncFeatureDeps, server: Server): Workers {
  const feature = asyncFeature(deps);
  feature.sockets.attach(server);
  feature.runner.start({
    run: (j) => feature.service.run(j),
    timer: (j) => feature.service.timer(j),
    deliver: (j) => feature.webhooks.deliver(j),
  });
  return {
    feature,
    drain: () => feature.sockets.drain(),
    async close() {
      await feature.runner.close();
      await feature.sockets.close();
      await feature.bus.close();
      features.delete(deps.state);
    },
  };
}
