import type { FastifyInstance } from 'fastify';
import { GatewayError } from '../errors/index.ts';
import { SESSION_ID, type SessionStore } from '../sessions/types.ts';
import { authOf } from './context.ts';

/**
 * GET /v1/sessions/{id} for console keys: a session of the key's own project, for debugging (its
 * turns, running summary and summary version). Reading does not extend its life. Unknown, expired,
 * malformed and other projects' ids are all the same 404.
 */
export function sessionRoutes(app: FastifyInstance, store: SessionStore): void {
  app.get<{ Params: { id: string } }>('/sessions/:id', { config: { scope: 'console' } }, async (req) => {
    const auth = authOf(req);
    const id = req.params.id.toLowerCase();
    const s = SESSION_ID.test(id)
      ? await store.peek(auth.project.config.id, id).catch((err: unknown) => {
          throw new GatewayError('service_unavailable', 'Session memory is unavailable right now.', {
            retryAfterSeconds: 1,
            cause: err,
          });
        })
      : undefined;
    if (!s) throw new GatewayError('not_found', `Session "${req.params.id}" does not exist in this project.`);
    const tokens = s.turns.reduce((n, t) => n + t.tokens, s.summaryTokens);
    return {
      object: 'session',
      id: s.id,
      project_id: auth.project.config.id,
      workflow: s.workflow,
      created_at: new Date(s.createdAt).toISOString(),
      expires_at: new Date(s.expiresAt).toISOString(),
      tokens,
      summary: s.summary || null,
      summary_version: s.summaryVersion,
      summary_tokens: s.summaryTokens,
      folded_turns: s.foldedTurns,
      turns: s.turns.map((t) => ({ ...t.message, tokens: t.tokens, at: new Date(t.at).toISOString() })),
    };
  });
}
