import { getEncoding, type Tiktoken } from 'js-tiktoken';
import type { ProviderType } from '#contract';
import type { ChatMessage } from '../providers/types.ts';

/**
 * Token counts for estimates made before a provider answers: spend reservations, rate-limit
 * admission and session summarisation thresholds. OpenAI-family models (openai, azure-openai,
 * openai-compatible) are counted with OpenAI's o200k_base tokenizer (js-tiktoken); Anthropic and
 * Gemini publish no offline tokenizer, so their text is approximated at 4 characters a token,
 * rounded up (their real counts come back in the usage of the answer and correct the estimate).
 */

let encoding: Tiktoken | undefined;

/** Loading the ranks takes about a second of CPU: do it at start-up when a feature will need it. */
export function warmTokenizer(): void {
  encoding ??= getEncoding('o200k_base');
}

const usesTiktoken = (type: ProviderType): boolean =>
  type === 'openai' || type === 'azure-openai' || type === 'openai-compatible';

export function countTextTokens(text: string, type: ProviderType): number {
  if (text.length === 0) return 0;
  if (!usesTiktoken(type)) return Math.ceil(text.length / 4);
  warmTokenizer();
  return encoding!.encode(text).length;
}

/** Image parts are estimated at a flat 765 tokens (OpenAI's high-detail 512px tile cost plus base). */
const IMAGE_TOKENS = 765;
/** OpenAI's chat format adds about 3 tokens per message and 3 to prime the reply. */
const PER_MESSAGE = 3;
const REPLY_PRIMING = 3;

export function countMessageTokens(messages: readonly ChatMessage[], type: ProviderType): number {
  let n = REPLY_PRIMING;
  for (const m of messages) {
    n += PER_MESSAGE + countTextTokens(m.role, type);
    if (typeof m.content === 'string') n += countTextTokens(m.content, type);
    else if (m.content)
      for (const part of m.content)
        n += part.type === 'text' ? countTextTokens(part.text, type) : IMAGE_TOKENS;
    for (const call of m.tool_calls ?? [])
      n += countTextTokens(call.function.name, type) + countTextTokens(call.function.arguments, type);
  }
  return n;
}
