import type { FastifyReply } from 'fastify';
import type { Exchange } from '../pipeline/exchange.ts';
import type { Failure, PipelineResult } from '../pipeline/result.ts';
import { type ChunkContext, chunkFor, usageChunk } from './chunks.ts';
import { nativeMeta, streamMetadata } from './meta.ts';
import { writeStream } from './stream-out.ts';

/**
 * The `error` of a stream that broke after it started, in OpenAI's envelope: the provider's failure
 * as `upstream_error`, the gateway's own refusal (a spend cap) as itself.
 */
export function streamError(f: Failure): Record<string, unknown> {
  return f.refusal
    ? { message: f.message, type: f.refusal.type, code: f.refusal.code, param: null }
    : {
        message: `The stream failed after it started: ${f.message}`,
        type: 'api_error',
        code: 'upstream_error',
        param: null,
      };
}

export interface StreamEncoding {
  dialect: 'native' | 'compat';
  /** Compatible surface: the final usage chunk only when asked (stream_options.include_usage). */
  includeUsage?: boolean;
}

/**
 * SSE for the native and compatible surfaces, in OpenAI's chunk format with the `[DONE]`
 * terminator. The native dialect opens with `event: metadata` and closes with `event: meta`; a
 * failure after the first chunk ends the stream with an explicit error (native `event: error`,
 * compatible a `data: {error}` line the OpenAI SDK raises), never a silent [DONE].
 */
export function encodeStream(
  reply: FastifyReply,
  ex: Exchange,
  result: Extract<PipelineResult, { kind: 'streaming' }>,
  enc: StreamEncoding,
): Promise<FastifyReply> {
  const p = result.prepared;
  const ctx: ChunkContext = {
    id: `chatcmpl-${ex.id}`,
    created: Math.floor(Date.now() / 1000),
    model: p.workflowName ?? p.requestedModel,
  };
  const native = enc.dialect === 'native';
  let first = true;
  return writeStream(reply, ex, result, (sse) => ({
    open() {
      if (native) sse.event('metadata', streamMetadata(ex, result));
    },
    event(ev) {
      const chunk = chunkFor(ctx, ev, first);
      if (!chunk) return;
      first = false;
      sse.data(chunk);
    },
    failed(f) {
      const error = streamError(f);
      if (native) sse.event('error', { error });
      else sse.data({ error });
    },
    answered(answer, end) {
      if (!native && enc.includeUsage && answer.usage) sse.data(usageChunk(ctx, answer.usage));
      if (native) sse.event('meta', nativeMeta(ex, result, end));
      sse.done();
    },
  }));
}
