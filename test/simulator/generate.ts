/**
 * Deterministic content: the same request always yields the same reply, so tests can assert on it.
 *
 *   reply text   "Simulated <provider>/<model> reply: <first 40 chars of the last user text>"
 *   tokens       ceil(chars / 4) of the text concerned (prompt: all text the request carries)
 *   embeddings   8 dims (or the requested dimensions), unit length, derived from a hash of the input
 */
import type { ProviderName } from './types.ts';

export function fnv1a(text: string, seed = 0x811c9dc5): number {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export function tokens(text: string): number {
  return Math.ceil(text.length / 4);
}

let counter = 0;
/** Unique, readable ids with the provider's prefix (chatcmpl-, msg_, toolu_, call_ ...). */
export function newId(prefix: string): string {
  counter = (counter + 1) % 0x7fffffff;
  return `${prefix}sim${counter.toString(36).padStart(6, '0')}${fnv1a(prefix + counter)
    .toString(36)
    .padStart(7, '0')}`;
}

export function unixSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

const FILLER = ' and so on';

/**
 * The reply for a request. Streams need at least `minChars` characters to fill the requested number of
 * chunks, so short replies are padded with " and so on" when a stream asks for more chunks than letters.
 */
export function replyText(provider: ProviderName, model: string, lastUserText: string, minChars = 0): string {
  let text = `Simulated ${provider}/${model} reply: ${lastUserText.slice(0, 40)}`;
  while (text.length < minChars) text += FILLER;
  return text;
}

export type StopKind = 'stop' | 'length' | 'stop_sequence';

export interface Limited {
  text: string;
  reason: StopKind;
  stopSequence: string | null;
}

/** Applies stop sequences (earliest match wins) and the max-token budget (4 chars a token). */
export function applyLimits(text: string, maxTokens: number | undefined, stops: readonly string[]): Limited {
  let out = text;
  let reason: StopKind = 'stop';
  let stopSequence: string | null = null;
  let at = -1;
  for (const s of stops) {
    const i = s ? out.indexOf(s) : -1;
    if (i >= 0 && (at < 0 || i < at)) {
      at = i;
      stopSequence = s;
    }
  }
  if (at >= 0) {
    out = out.slice(0, at);
    reason = 'stop_sequence';
  }
  if (maxTokens !== undefined && maxTokens > 0 && tokens(out) > maxTokens) {
    out = out.slice(0, maxTokens * 4);
    reason = 'length';
    stopSequence = null;
  }
  return { text: out, reason, stopSequence };
}

/** Splits text into `n` contiguous, non-empty pieces (fewer when the text is shorter than n). */
export function splitChunks(text: string, n: number): string[] {
  const count = Math.max(1, Math.min(Math.floor(n), text.length));
  const pieces: string[] = [];
  for (let i = 0; i < count; i++) {
    pieces.push(
      text.slice(Math.floor((i * text.length) / count), Math.floor(((i + 1) * text.length) / count)),
    );
  }
  return pieces;
}

export const DEFAULT_EMBEDDING_DIMS = 8;

/** A unit-length vector from a hash of the input: equal inputs give equal vectors. */
export function embedding(input: string, dims = DEFAULT_EMBEDDING_DIMS): number[] {
  const raw: number[] = [];
  let h = fnv1a(input);
  for (let i = 0; i < dims; i++) {
    h = fnv1a(String(i), h);
    raw.push((h / 0xffffffff) * 2 - 1);
  }
  const norm = Math.sqrt(raw.reduce((s, v) => s + v * v, 0)) || 1;
  return raw.map((v) => Math.round((v / norm) * 1e6) / 1e6);
}

/** OpenAI `encoding_format: base64`: little-endian float32 bytes, base64 encoded. */
export function embeddingBase64(vector: readonly number[]): string {
  return Buffer.from(new Float32Array(vector).buffer).toString('base64');
}
