import type { Server } from 'node:http';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Pipeline } from '../pipeline/run.ts';
import type { Settle } from '../pipeline/settle.ts';
import type { SnapshotStore } from '../snapshot/store.ts';
import type { Tracing } from '../tracing/types.ts';
import type { WebhookDispatcher } from '../webhooks/dispatcher.ts';
import { SocketServer } from '../ws/server.ts';
import type { ResultBus } from './bus.ts';
import type { ChannelStore } from './channels.ts';
import type { AsyncConfig } from './config.ts';
import type { JobRunner } from './runner.ts';
import { AsyncService } from './service.ts';
import type { TokenStore } from './tokens.ts';

export interface AsyncFeatureDeps {
  snapshots: SnapshotStore;
  pipeline: Pipeline;
  settle: Settle;
  registry: Registry;
  logger: Logger;
  now: () => number;
  config: AsyncConfig;
  channels: ChannelStore;
  tokens: TokenStore;
  runner: JobRunner;
  bus: ResultBus;
  webhooks: WebhookDispatcher;
  tracing: Tracing;
}

/** Async requests, their WebSocket endpoint and the workers that run jobs, timers and webhook deliveries. */
export interface AsyncFeature {
  service: AsyncService;
  webhooks: WebhookDispatcher;
  /** Attaches the WebSocket endpoint to the HTTP server and starts the workers. */
  start(server: Server): void;
  /** SIGTERM, before the HTTP server closes: sockets get 1012 so clients reconnect elsewhere. */
  drain(): Promise<void>;
  /** After in-flight requests finished: workers finish their active jobs, then everything closes. */
  close(): Promise<void>;
}

export function asyncFeature(deps: AsyncFeatureDeps): AsyncFeature {
  const service = new AsyncService({
    snapshots: deps.snapshots,
    pipeline: deps.pipeline,
    settle: deps.settle,
    logger: deps.logger,
    now: deps.now,
    config: deps.config,
    channels: deps.channels,
    tokens: deps.tokens,
    runner: deps.runner,
    bus: deps.bus,
    webhooks: deps.webhooks,
    tracing: deps.tracing,
  });
  const sockets = new SocketServer({
    tokens: deps.tokens,
    channels: deps.channels,
    bus: deps.bus,
    logger: deps.logger,
    registry: deps.registry,
  });
  return {
    service,
    webhooks: deps.webhooks,
    start(server) {
      sockets.attach(server);
      deps.runner.start({
        run: (j) => service.run(j),
        timer: (j) => service.timer(j),
        deliver: (j) => deps.webhooks.deliver(j),
      });
    },
    drain: () => sockets.drain(),
    async close() {
      await deps.runner.close();
      await sockets.close();
      await deps.bus.close();
    },
  };
}
