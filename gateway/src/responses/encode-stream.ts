import type { FastifyReply } from 'fastify';
import type { Exchange } from '../pipeline/exchange.ts';
import type { PipelineResult, StreamEnd } from '../pipeline/result.ts';
import { type ChunkContext, chunkFor, usageChunk } from './chunks.ts';
import { nativeMeta, serviceHeaders, streamMetadata } from './meta.ts';
import { SseWriter } from './sse.ts';

export interface StreamEncoding {
  dialect: 'native' | 'compat';
  /** Compatible surface: the final usage chunk only when asked (stream_options.include_usage). */
  includeUsage?: boolean;
}

/**
 * SSE for both surfaces, in OpenAI's chunk format with the `[DONE]` terminator. The native dialect
 * opens with `event: metadata` and closes with `event: meta`; a failure after the first chunk ends
 * the stream with an explicit error (native `event: error`, compatible a `data: {error}` line the
 * OpenAI SDK raises), never a silent [DONE].
 */
export async function encodeStream(
  reply: FastifyReply,
  ex: Exchange,
  result: Extract<PipelineResult, { kind: 'streaming' }>,
  enc: StreamEncoding,
): Promise<FastifyReply> {
  const p = result.prepared;
  const { events } = result;
  let end: StreamEnd | undefined;
  try {
    reply.hijack();
    const sse = new SseWriter(reply.raw, serviceHeaders(ex, result, { duration: false }));
    const ctx: ChunkContext = {
      id: `chatcmpl-${ex.id}`,
      created: Math.floor(Date.now() / 1000),
      model: p.workflowName ?? p.requestedModel,
    };
    if (enc.dialect === 'native') sse.event('metadata', streamMetadata(ex, result));
    let first = true;
    let step = await events.next();
    while (!step.done) {
      const chunk = chunkFor(ctx, step.value, first);
      if (chunk) {
        first = false;
        sse.data(chunk);
      }
      step = await events.next();
    }
    end = step.value;
    if (!end.ok) {
      const f = end.failure;
      const error = f.refusal
        ? { message: f.message, type: f.refusal.type, code: f.refusal.code, param: null }
        : {
            message: `The stream failed after it started: ${f.message}`,
            type: 'api_error',
            code: 'upstream_error',
            param: null,
          };
      if (enc.dialect === 'native') sse.event('error', { error });
      else sse.data({ error });
      sse.end();
      return reply;
    }
    const usage = end.answer.usage;
    if (enc.dialect === 'compat' && enc.includeUsage && usage) sse.data(usageChunk(ctx, usage));
    if (enc.dialect === 'native') sse.event('meta', nativeMeta(ex, result, end));
    sse.done();
    return reply;
  } finally {
    // However the encoding ended, the stream is followed to its end: its features finish and it settles.
    if (!end) for await (const _ of { [Symbol.asyncIterator]: () => events });
  }
}
