/** POST /v1/completions (legacy text completions). max_tokens defaults to 16, as in the real API. */
import type { Exchange } from '../exchange.ts';
import { applyLimits, newId, replyText, tokens, unixSeconds } from '../generate.ts';
import { sendJson } from '../respond.ts';
import { writeStream } from '../sse.ts';
import type { CompletionRequest } from './schemas.ts';
import { type CompletionOutcome, completionFrames } from './stream.ts';

function promptOf(prompt: CompletionRequest['prompt']): string {
  if (typeof prompt === 'string') return prompt;
  const first = prompt[0];
  return typeof first === 'string' ? first : '';
}

export async function handleCompletion(ex: Exchange): Promise<void> {
  const req = ex.body as CompletionRequest;
  const prompt = promptOf(req.prompt);
  const stops = req.stop == null ? [] : typeof req.stop === 'string' ? [req.stop] : req.stop;
  const limited = applyLimits(
    replyText(ex.provider, ex.model, prompt, req.stream ? ex.streamChunks : 0),
    req.max_tokens ?? 16,
    stops,
  );
  const text = req.echo ? prompt + limited.text : limited.text;
  const o: CompletionOutcome = {
    id: newId('cmpl-'),
    created: unixSeconds(),
    model: ex.model,
    text,
    finishReason: limited.reason === 'length' ? 'length' : 'stop',
    promptTokens: tokens(prompt),
    completionTokens: tokens(limited.text),
  };
  if (req.stream) {
    return writeStream(ex, completionFrames(o, ex.streamChunks, req.stream_options?.include_usage === true));
  }
  return sendJson(ex, 200, {
    id: o.id,
    object: 'text_completion',
    created: o.created,
    model: o.model,
    system_fingerprint: 'fp_simulator',
    choices: [{ text: o.text, index: 0, logprobs: null, finish_reason: o.finishReason }],
    usage: {
      prompt_tokens: o.promptTokens,
      completion_tokens: o.completionTokens,
      total_tokens: o.promptTokens + o.completionTokens,
    },
  });
}
