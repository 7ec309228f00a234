import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { encodeNative } from '../encoders/encode-native.ts';
import { encodeStream } from '../encoders/encode-stream.ts';
import type { Pipeline } from '../pipeline/run.ts';
import { LIMITS } from '../requests/limits.ts';
import { nativeBody } from '../requests/native-schema.ts';
import { parseBody } from '../requests/zod-error.ts';
import { serve } from './context.ts';

/** The native surface: parse the body, run the pipeline, encode raw, wrapped or SSE. */
export function nativeRoutes(app: FastifyInstance, pipeline: Pipeline): void {
  const sync = async (req: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const body = parseBody(nativeBody, req.body);
    const { ex, result } = await serve(pipeline, req, reply, 'native', {
      body,
      stream: body.stream === true,
    });
    if (result.kind === 'streaming') return encodeStream(reply, ex, result, { dialect: 'native' });
    return encodeNative(reply, ex, result, body.format ?? 'raw');
  };
  app.post('/ai', { config: { surface: 'native', scope: 'ai' }, bodyLimit: LIMITS.nativeBodyBytes }, sync);
}
