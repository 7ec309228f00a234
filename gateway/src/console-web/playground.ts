import type { FastifyInstance } from 'fastify';
import { microsToUsd } from '#contract';
import { requireScope } from '../auth/authenticate.ts';
import { wrappedBody } from '../encoders/encode-native.ts';
import { serviceHeaders } from '../encoders/meta.ts';
import { authOf, serve } from '../http/context.ts';
import type { Pipeline } from '../pipeline/run.ts';
import { LIMITS } from '../requests/limits.ts';
import { nativeBody } from '../requests/native-schema.ts';
import { parseBody } from '../requests/zod-error.ts';

/** How the request log tells a playground request from an application's. */
export const CONSOLE_SOURCE = { source: 'console' } as const;

/**
 * The playground's send: a native /v1/ai request of the signed-in project, run by the same
 * pipeline (caps, limits, cache, sessions, request log), answered in the wrapped format with what
 * the page shows beside `meta` (the cost). The session signs in with the `console` scope; running a
 * workflow also needs the key's `ai` scope, as it would on /v1/ai.
 */
export function playgroundRoute(app: FastifyInstance, pipeline: Pipeline): void {
  app.post(
    '/api/playground',
    { config: { surface: 'native', scope: 'console' }, bodyLimit: LIMITS.nativeBodyBytes },
    async (req, reply) => {
      req.logAs = { details: CONSOLE_SOURCE };
      requireScope(authOf(req), 'ai');
      const body = parseBody(nativeBody, req.body);
      // Streaming is not offered by the playground yet: its answer is always one JSON body.
      const { ex, result } = await serve(pipeline, req, reply, 'native', {
        body: { ...body, stream: false, format: 'wrapped' },
        stream: false,
      });
      if (result.kind === 'streaming') throw new Error('a stream from a request that asked for none');
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
