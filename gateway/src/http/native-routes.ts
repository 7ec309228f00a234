import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { runPipeline } from '../pipeline/run.ts';
import type { PipelineStages } from '../pipeline/stages.ts';
import { LIMITS } from '../requests/limits.ts';
import { nativeBody } from '../requests/native-schema.ts';
import { parseBody } from '../requests/zod-error.ts';
import { encodeNative } from '../responses/encode-native.ts';
import { encodeStream } from '../responses/encode-stream.ts';
import { exchangeOf } from './context.ts';

/** The native surface: parse the body, run the pipeline, encode raw, wrapped or SSE. */
export function nativeRoutes(app: FastifyInstance, stages: PipelineStages): void {
  const sync = async (req: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const body = parseBody(nativeBody, req.body);
    const ex = exchangeOf(req, reply, 'native');
    const outcome = await runPipeline(stages, ex, { body, mode: body.stream ? 'stream' : 'sync' });
    if (outcome.kind === 'streaming') return encodeStream(reply, ex, outcome, { dialect: 'native' });
    return encodeNative(reply, ex, outcome, body.format ?? 'raw');
  };
  app.post('/ai', { config: { surface: 'native', scope: 'ai' }, bodyLimit: LIMITS.nativeBodyBytes }, sync);
}
