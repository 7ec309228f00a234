import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { microsToUsd } from '#contract';
import { requireScope } from '../auth/authenticate.ts';
import { wrappedBody } from '../encoders/encode-native.ts';
import { encodeStream } from '../encoders/encode-stream.ts';
import { serviceHeaders } from '../encoders/meta.ts';
import { GatewayError } from '../errors/index.ts';
import { authOf, serve } from '../http/context.ts';
import type { Pipeline } from '../pipeline/run.ts';
import { LIMITS } from '../requests/limits.ts';
import { nativeBody } from '../requests/native-schema.ts';
import { parseBody } from '../requests/zod-error.ts';

/** How the request log tells a playground request from an application's. */
export const CONSOLE_SOURCE = { source: 'console' } as const;

const pinSchema = z
  .object({ slot: z.coerce.number({ error: 'slot must be a slot index' }).int().min(0).max(63).optional() })
  .strict();

/** `?slot=N`: the compare view pins a request to one slot of its workflow (0 the primary). */
function pinQuery(raw: unknown): { slot?: number | undefined } {
  const r = pinSchema.safeParse(raw ?? {});
  if (r.success) return r.data;
  throw new GatewayError('invalid_request', r.error.issues[0]?.message ?? 'bad query', { param: 'slot' });
}

/**
 * The playground's send: a native /v1/ai request of the signed-in project, run by the same
 * pipeline (caps, limits, cache, sessions, request log), answered in the wrapped format with what
 * the page shows beside `meta` (the cost), or streamed as the native SSE. The session signs in with the `console` scope; running a
 * workflow also needs the key's `ai` scope, as it would on /v1/ai.
 */
export function playgroundRoute(app: FastifyInstance, pipeline: Pipeline): void {
  app.post(
    '/api/playground',
    { config: { surface: 'native', scope: 'console' }, bodyLimit: LIMITS.nativeBodyBytes },
    async (req, reply) => {
      const { slot } = pinQuery(req.query);
      req.logDetails = slot === undefined ? CONSOLE_SOURCE : { ...CONSOLE_SOURCE, pinned_slot: slot };
      requireScope(authOf(req), 'ai');
      const body = parseBody(nativeBody, req.body);
      const stream = body.stream === true;
      const { ex, result } = await serve(pipeline, req, reply, 'native', {
        body: { ...body, format: 'wrapped' },
        stream,
        pinSlot: slot,
      });
      // Streamed: the native SSE as /v1/ai sends it (metadata, chunks, then meta or error).
      if (result.kind === 'streaming') return encodeStream(reply, ex, result, { dialect: 'native' });
      reply.headers(serviceHeaders(ex, result, { duration: true }));
      const micros = result.kind === 'answered' ? result.answer.costMicros : result.failure.costMicros;
      const ttft = result.kind === 'answered' ? result.answer.ttftMs : result.failure.ttftMs;
      return {
        ...wrappedBody(ex, result),
        playground: { cost_usd: micros === null ? null : microsToUsd(micros), ttft_ms: ttft ?? null },
      };
    },
  );
}
