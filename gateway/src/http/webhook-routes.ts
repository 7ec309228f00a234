import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { GatewayError } from '../errors/index.ts';
import { parseBody } from '../requests/zod-error.ts';
import type { WebhookDispatcher } from '../webhooks/dispatcher.ts';
import { authOf } from './context.ts';

const since = z.union([
  z.coerce.number().int().nonnegative(),
  z.iso.datetime({ offset: true }).transform((s) => Date.parse(s)),
]);
const listQuery = z.object({
  since: since.optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
});
const replayBody = z.object({ since });

/**
 * Dead letters of the key's project (console scope): list (since a time), replay one, replay all
 * since a time. A replay sends the event again from attempt 1 with the same webhook-id.
 */
export function webhookRoutes(app: FastifyInstance, webhooks: WebhookDispatcher): void {
  const store = () => webhooks;
  app.get('/webhooks/dead-letters', { config: { scope: 'console' } }, async (req) => {
    const q = listQuery.safeParse(req.query);
    if (!q.success)
      throw new GatewayError('invalid_request', 'since: Unix ms or an ISO 8601 time; limit: 1-1000.');
    const projectId = authOf(req).project.config.id;
    const letters = await store().deadLetters(projectId, q.data.since ?? 0, q.data.limit);
    return {
      data: letters.map((d) => ({ ...d, dead_at: new Date(d.dead_at).toISOString() })),
      disabled_endpoints: await store().disabledEndpoints(projectId),
    };
  });
  app.post(
    '/webhooks/dead-letters/replay',
    { config: { scope: 'console', bodyOptional: true } },
    async (req) => {
      const body = parseBody(replayBody, req.body ?? {});
      return { replayed: await webhooks.replaySince(authOf(req).project.config.id, body.since) };
    },
  );
  app.post(
    '/webhooks/dead-letters/:id/replay',
    { config: { scope: 'console', bodyOptional: true } },
    async (req) => {
      const id = (req.params as { id: string }).id;
      if (!(await webhooks.replay(authOf(req).project.config.id, id)))
        throw new GatewayError('not_found', `No dead letter ${id} in this project.`);
      return { replayed: 1, id };
    },
  );
}
