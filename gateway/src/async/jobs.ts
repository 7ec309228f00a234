import type { Server } from 'node:http';
import type { Registry } from 'prom-client';
import type { WebhookDispatcher } from '../webhooks/dispatcher.ts';
import { SocketServer } from '../ws/server.ts';
import type { AsyncDeps } from './deps.ts';
import type { RunJob } from './runner.ts';
import { AsyncService } from './service.ts';

/** What async requests are served with, plus the registry their socket metrics go to. */
export interface AsyncJobsDeps extends AsyncDeps {
  registry: Registry;
  /** Runs the jobs of background responses (RunJob.response), which share the run queue. */
  background?: (job: RunJob) => Promise<void>;
}

/**
 * Async requests as a running whole: their service, their WebSocket endpoint, the webhooks they emit
 * and the workers that run their jobs, timers and webhook deliveries. Not a pipeline Feature: the
 * jobs run through the pipeline like any request.
 */
export interface AsyncJobs {
  service: AsyncService;
  webhooks: WebhookDispatcher;
  /** Attaches the WebSocket endpoint to the HTTP server and starts the workers. */
  start(server: Server): void;
  /** SIGTERM, before the HTTP server closes: sockets get 1012 so clients reconnect elsewhere. */
  drain(): Promise<void>;
  /** After in-flight requests finished: workers finish their active jobs, then everything closes. */
  close(): Promise<void>;
}

export function asyncJobs(deps: AsyncJobsDeps): AsyncJobs {
  const service = new AsyncService(deps);
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
        run: (j) => (j.response && deps.background ? deps.background(j) : service.run(j)),
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
