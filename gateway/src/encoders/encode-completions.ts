import type { FastifyReply } from 'fastify';
import type { Exchange } from '../pipeline/exchange.ts';
import type { PipelineResult } from '../pipeline/result.ts';
import type { CompletionResult } from '../providers/types.ts';
import { compatUsage, SYSTEM_FINGERPRINT } from './data.ts';
import { streamError } from './encode-stream.ts';
import { writeStream } from './stream-out.ts';

/** What every object of one answer names: its id, its time and the workflow as `model`. */
interface CompletionContext {
  id: string;
  created: number;
  model: string;
}

const completionId = (id: string): string => (id.startsWith('cmpl-') ? id : `cmpl-${id}`);

const head = (ctx: CompletionContext) => ({
  id: ctx.id,
  object: 'text_completion',
  created: ctx.created,
  model: ctx.model,
  system_fingerprint: SYSTEM_FINGERPRINT,
});

const choice = (text: string, finish: string | null) => ({
  text,
  index: 0,
  logprobs: null,
  finish_reason: finish,
});

/** OpenAI's legacy `text_completion` for a completion result; `model` is the workflow name. */
export function textCompletion(result: CompletionResult, model: string, created: number) {
  return {
    ...head({ id: completionId(result.id), created, model }),
    choices: [choice(result.text, result.finish_reason)],
    usage: compatUsage(result.usage),
  };
}

/**
 * POST /v1/completions with `stream: true`: one `text_completion` frame per text delta, a frame
 * with the finish reason, the usage frame when asked (`stream_options.include_usage`), then
 * `[DONE]`; a failure after the first frame is a `data: {error}` line and no `[DONE]`, as on chat
 * completions.
 */
export function encodeCompletionStream(
  reply: FastifyReply,
  ex: Exchange,
  result: Extract<PipelineResult, { kind: 'streaming' }>,
  includeUsage: boolean,
): Promise<FastifyReply> {
  const p = result.prepared;
  const ctx: CompletionContext = {
    id: `cmpl-${ex.id}`,
    created: Math.floor(Date.now() / 1000),
    model: p.workflowName ?? p.requestedModel,
  };
  return writeStream(reply, ex, result, (sse) => ({
    // No opening frame: the first text is the first frame.
    open: () => undefined,
    event(ev) {
      if (ev.type === 'delta' && ev.content) sse.data({ ...head(ctx), choices: [choice(ev.content, null)] });
      else if (ev.type === 'finish') sse.data({ ...head(ctx), choices: [choice('', ev.finish_reason)] });
    },
    failed(f) {
      sse.data({ error: streamError(f) });
    },
    answered(answer) {
      if (includeUsage && answer.usage)
        sse.data({ ...head(ctx), choices: [], usage: compatUsage(answer.usage) });
      sse.done();
    },
  }));
}
