import Fastify, { type FastifyInstance } from 'fastify';
import type { GatewayMetrics } from '../observability/metrics.ts';
import type { SnapshotStore } from '../snapshot/store.ts';
import { ZOD_ONLY } from './zod-only.ts';

/** The operations port (9090): Prometheus metrics and probes, kept off the API port. */
export function buildOpsApp(
  store: SnapshotStore,
  metrics: GatewayMetrics,
  isShuttingDown: () => boolean,
): FastifyInstance {
  const app = Fastify({ logger: false, schemaController: ZOD_ONLY });
  app.get('/metrics', async (_req, reply) => {
    const text = await metrics.registry.metrics();
    return reply.header('content-type', metrics.registry.contentType).send(text);
  });
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_req, reply) => {
    const runtime = store.current;
    if (!runtime || isShuttingDown())
      return reply
        .code(503)
        .send({ status: 'not ready', reason: runtime ? 'shutting down' : 'no snapshot loaded yet' });
    return { status: 'ready', snapshot: runtime.version };
  });
  return app;
}
