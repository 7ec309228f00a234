import {
  type CompatCompletionBody,
  compatCompletionBody,
  UNSUPPORTED_COMPLETION_PARAMS,
} from './compat-schema.ts';
import type { NativeBody } from './native-schema.ts';
import { paramRules, refuseParams, unsupported } from './param-rules.ts';

export { UNSUPPORTED_COMPLETION_PARAMS };

/**
 * Every other parameter of compatCompletionBody: carried into the native body by
 * compatCompletionToNative, or read by the surface itself (`stream_options.include_usage`, `n` and
 * `best_of` of 1). The completions suite fails when a key of the schema is in neither list.
 */
export const MAPPED_COMPLETION_PARAMS = [
  'model',
  'prompt',
  'temperature',
  'max_tokens',
  'top_p',
  'stop',
  'stream',
  'stream_options',
  'seed',
  'presence_penalty',
  'frequency_penalty',
  'logit_bias',
  'n',
  'best_of',
  'user',
] as const;

const COMPLETION_PARAMS = paramRules(
  compatCompletionBody.shape,
  Object.fromEntries(UNSUPPORTED_COMPLETION_PARAMS.map((name) => [name, []])),
  { single: ['n', 'best_of'], fields: { stream_options: { known: ['include_usage'] } } },
);

/**
 * Refuses what POST /v1/completions cannot honour before the schema reads the body: a prompt
 * other than one text (token ids, several prompts: a provider may only be sent text, and one
 * request is one completion), the refused parameters, counts above 1 and unknown parameters.
 */
export function rejectUnsupportedCompletion(raw: unknown): void {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return;
  const prompt = (raw as { prompt?: unknown }).prompt;
  if (Array.isArray(prompt)) {
    if (prompt.some((p) => typeof p !== 'string'))
      throw unsupported(
        'prompt',
        'prompt must be text: token-id prompts are not supported by this gateway.',
        'Send prompt: "..." as a string.',
      );
    if (prompt.length !== 1)
      throw unsupported(
        'prompt',
        `prompt must be one string: ${prompt.length} prompts in one request are not supported by this gateway.`,
        'Send one request per prompt.',
      );
  }
  refuseParams(raw, COMPLETION_PARAMS);
}

/** A legacy completions body in the native vocabulary, which the pipeline makes a CompletionRequest. */
export function compatCompletionToNative(body: CompatCompletionBody): NativeBody {
  return {
    model: body.model,
    prompt: typeof body.prompt === 'string' ? body.prompt : body.prompt[0],
    ...(body.temperature != null ? { temperature: body.temperature } : {}),
    ...(body.max_tokens != null ? { max_tokens: body.max_tokens } : {}),
    ...(body.top_p != null ? { top_p: body.top_p } : {}),
    ...(body.stop != null ? { stop: body.stop } : {}),
    ...(body.seed != null ? { seed: body.seed } : {}),
    ...(body.presence_penalty != null ? { presence_penalty: body.presence_penalty } : {}),
    ...(body.frequency_penalty != null ? { frequency_penalty: body.frequency_penalty } : {}),
    ...(body.logit_bias != null ? { logit_bias: body.logit_bias } : {}),
    ...(body.user ? { user: body.user } : {}),
    ...(body.stream ? { stream: true } : {}),
  };
}
