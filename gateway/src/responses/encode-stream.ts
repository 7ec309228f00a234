import type { FastifyReply } from 'fastify';
import type { Exchange } from '../pipeline/exchange.ts';
import type { Outcome } from '../pipeline/outcome.ts';
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
  outcome: Extract<Outcome, { kind: 'streaming' }>,
  enc: StreamEncoding,
): Promise<FastifyReply> {
  const p = outcome.prepared;
  reply.hijack();
  const sse = new SseWriter(reply.raw, serviceHeaders(ex, outcome, { duration: false }));
  const ctx: ChunkContext = {
    id: `chatcmpl-${ex.id}`,
    created: Math.floor(Date.now() / 1000),
    model: p.workflowName ?? p.requestedModel,
  };
  if (enc.dialect === 'native') sse.event('metadata', streamMetadata(ex, outcome));
  let first = true;
  let step = await outcome.events.next();
  while (!step.done) {
    const chunk = chunkFor(ctx, step.value, first);
    if (chunk) {
      first = false;
      sse.data(chunk);
    }
    step = await outcome.events.next();
  }
  const end = step.value;
  if (!end.ok) {
    const error = end.refusal
      ? { message: end.message, type: end.refusal.type, code: end.refusal.code, param: null }
      : {
          message: `The stream failed after it started: ${end.message}`,
          type: 'api_error',
          code: 'upstream_error',
          param: null,
        };
    if (enc.dialect === 'native') sse.event('error', { error });
    else sse.data({ error });
    sse.end();
    return reply;
  }
  if (enc.dialect === 'compat' && enc.includeUsage && end.usage) sse.data(usageChunk(ctx, end.usage));
  if (enc.dialect === 'native') sse.event('meta', nativeMeta(ex, outcome));
  sse.done();
  return reply;
}
