import type { ProviderType } from '#contract';
import type { ChatMessage } from '../providers/types.ts';

/**
 * Token counts made before a provider answers: spend reservations, rate-limit admission, session
 * turns and the Messages stream's `message_start`. They are estimates from the characters, the
 * same for every provider: four ASCII characters a token (OpenAI's rule of thumb for English, and
 * what its own rate limiter admits on), and a token for every other UTF-16 unit, so CJK text and
 * emoji, which run about one token a character, are not under-counted fourfold. The provider's
 * reported usage corrects each estimate when the answer is in (spend settle, token-limit
 * correction), as OpenAI's limiter does.
 *
 * No tokenizer table stays resident for them: OpenAI's o200k_base (gpt-tokenizer) costs a pod about
 * 50 MB of RSS and a few hundred ms of start-up. It is loaded only where an exact count is the
 * answer itself: `exactMessageTokens`, for count_tokens on an OpenAI-family workflow.
 */

const estimateText = (text: string): number => {
  let other = 0;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) other++;
  return Math.ceil((text.length - other) / 4) + other;
};

/** Image parts are estimated at a flat 765 tokens (OpenAI's high-detail 512px tile cost plus base). */
const IMAGE_TOKENS = 765;
/** OpenAI's chat format adds about 3 tokens per message and 3 to prime the reply. */
const PER_MESSAGE = 3;
const REPLY_PRIMING = 3;

function countWith(count: (text: string) => number, messages: readonly ChatMessage[]): number {
  let n = REPLY_PRIMING;
  for (const m of messages) {
    n += PER_MESSAGE + count(m.role);
    if (typeof m.content === 'string') n += count(m.content);
    else if (m.content)
      for (const part of m.content) n += part.type === 'text' ? count(part.text) : IMAGE_TOKENS;
    for (const call of m.tool_calls ?? []) n += count(call.function.name) + count(call.function.arguments);
  }
  return n;
}

const countText = (text: string): number => (text.length === 0 ? 0 : estimateText(text));

/**
 * A count no tokenizer can exceed: the UTF-8 bytes (every byte-level BPE token, OpenAI's, Anthropic's
 * and Gemini's alike, covers at least one byte). Spend caps reserve against it, so a request never
 * costs more input than it reserved, whatever the text (dense code runs under four characters a token).
 */
const ceilingText = (text: string): number => Buffer.byteLength(text, 'utf8');

/** The estimate of a text's tokens (the provider type is for call sites that count per provider). */
export function countTextTokens(text: string, _type?: ProviderType): number {
  return countText(text);
}

/** The estimate of a chat prompt's tokens, with the chat format's per-message overhead. */
export function countMessageTokens(messages: readonly ChatMessage[], _type?: ProviderType): number {
  return countWith(countText, messages);
}

/** At least as many tokens as any provider counts for these messages (their UTF-8 bytes, and overhead). */
export function ceilingMessageTokens(messages: readonly ChatMessage[]): number {
  return countWith(ceilingText, messages);
}

/** At least as many tokens as any provider counts for this text. */
export function ceilingTextTokens(text: string): number {
  return ceilingText(text);
}

const usesOpenAiEncoding = (type: ProviderType): boolean =>
  type === 'openai' || type === 'azure-openai' || type === 'openai-compatible';

let encoder: Promise<{ countTokens(text: string): number }> | undefined;

/**
 * A prompt's tokens as the provider counts them where that can be known offline: OpenAI's o200k_base
 * for OpenAI-family providers (the table is loaded on the first call and kept), the estimate
 * otherwise (Anthropic and Gemini publish no offline tokenizer).
 */
export async function exactMessageTokens(
  messages: readonly ChatMessage[],
  type: ProviderType,
): Promise<number> {
  if (!usesOpenAiEncoding(type)) return countMessageTokens(messages);
  encoder ??= import('gpt-tokenizer/encoding/o200k_base');
  const exact = await encoder.catch((err: unknown) => {
    encoder = undefined;
    throw err;
  });
  return countWith((text) => (text.length === 0 ? 0 : exact.countTokens(text)), messages);
}
