import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { BackgroundResponses } from '../background/service.ts';
import { parseBody } from '../requests/zod-error.ts';
import type { StoredResponse } from '../stored-responses/types.ts';
import { compatibleAuth } from './compatible-switch.ts';

/** Query of GET /v1/responses/{id}: `stream=true` reads a background streamed response's events. */
const readQueryShape = z.object({
  stream: z.enum(['true', 'false'], { error: 'stream must be true or false' }).optional(),
  starting_after: z.coerce
    .number({ error: 'starting_after must be an integer' })
    .int('starting_after must be an integer')
    .min(-1, 'starting_after must be -1 or more')
    .optional(),
  // Accepted and changing nothing: no reasoning items are returned, and events are not obfuscated.
  include: z.unknown().optional(),
  include_obfuscation: z.unknown().optional(),
});

export const readQuery = (query: unknown) => parseBody(readQueryShape, query ?? {});

/** POST /v1/responses/{id}/cancel, on a background response of this project. */
export function backgroundRoutes(
  app: FastifyInstance,
  stored: (req: FastifyRequest) => Promise<StoredResponse>,
  background: BackgroundResponses,
): void {
  // Not a request to a workflow (the job it stops is logged): no request-log entry, like a read.
  app.post('/responses/:id/cancel', { config: { scope: 'ai', bodyOptional: true } }, async (req) => {
    const record = await stored(req);
    return background.cancel(compatibleAuth(req).project.config.id, record);
  });
}
