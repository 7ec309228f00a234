import type { ProviderType } from '#contract';
import type { ChatMessage } from '../providers/types.ts';

/**
 * Token counts for estimates made before a provider answers: spend reservations, rate-limit
 * admission and session summarisation thresholds. OpenAI-family models (openai, azure-openai,
 * openai-compatible) are counted with OpenAI's o200k_base encoding (gpt-tokenizer); Anthropic and
 * Gemini publish no offline tokenizer, so their text is approximated at 4 characters a token,
 * rounded up (their real counts come back in the usage of the answer and correct the estimate).
 *
 * gpt-tokenizer rather than js-tiktoken: measured here, loading o200k_base costs 170 ms and about
 * 72 MB of RSS against js-tiktoken's 760 ms and 191 MB. It is loaded asynchronously, only when a
 * snapshot uses a feature that counts tokens; until it is in, counts use the approximation, so
 * nothing ever blocks the event loop on it.
 */

let encoder: { countTokens(text: string): number } | undefined;
let loading: Promise<void> | undefined;

/** Starts loading the encoding (once); resolves when counts are exact. */
export function warmTokenizer(): Promise<void> {
  loading ??= import('gpt-tokenizer/encoding/o200k_base').then((m) => {
    encoder = m;
  });
  return loading;
}

const approximate = (text: string): number => Math.ceil(text.length / 4);

const usesOpenAiEncoding = (type: ProviderType): boolean =>
  type === 'openai' || type === 'azure-openai' || type === 'openai-compatible';

/**
 * Exact counting is not free: about 4 µs a character on text the encoding handles slowly (CJK,
 * base64: some 40 ms for this bound), and a run without a break (100,000 × "x") costs the square
 * of its length, seconds for one request. So each synchronous stretch of work (one request's
 * estimate) counts at most this many characters exactly and approximates the rest: bounded time on
 * the event loop whatever a body holds, exact counts for ordinary prompts.
 */
const EXACT_CHARS_PER_TURN = 8192;
/** Runs of one kind longer than this are counted in pieces of it. */
const RUN_PIECE = 128;
const LONG_RUN = /\S{129,}|\s{129,}/g;

let exactLeft = EXACT_CHARS_PER_TURN;
let refill = false;

function takeExact(chars: number): boolean {
  if (!refill) {
    refill = true;
    queueMicrotask(() => {
      exactLeft = EXACT_CHARS_PER_TURN;
      refill = false;
    });
  }
  if (chars > exactLeft) return false;
  exactLeft -= chars;
  return true;
}

function exact(count: (text: string) => number, text: string): number {
  LONG_RUN.lastIndex = 0;
  if (!LONG_RUN.test(text)) return count(text);
  let n = 0;
  let from = 0;
  LONG_RUN.lastIndex = 0;
  for (const m of text.matchAll(LONG_RUN)) {
    if (m.index > from) n += count(text.slice(from, m.index));
    for (let i = 0; i < m[0].length; i += RUN_PIECE) n += count(m[0].slice(i, i + RUN_PIECE));
    from = m.index + m[0].length;
  }
  if (from < text.length) n += count(text.slice(from));
  return n;
}

export function countTextTokens(text: string, type: ProviderType): number {
  if (text.length === 0) return 0;
  if (!usesOpenAiEncoding(type)) return approximate(text);
  if (!encoder) {
    void warmTokenizer();
    return approximate(text);
  }
  if (!takeExact(text.length)) return approximate(text);
  return exact(encoder.countTokens, text);
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
