/**
 * What Claude remembers across requests of one simulator: the key its thinking signatures are made
 * with (a thinking block sent back must carry the signature Claude gave it, byte for byte), and
 * the prompt prefixes it has cached (a `cache_control` breakpoint writes its prefix on first use
 * and reads it after, as `cache_creation_input_tokens` / `cache_read_input_tokens`).
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { tokens } from '../generate.ts';

export interface CacheUse {
  read: number;
  written: number;
  /** Of `written`, the tokens whose breakpoint asked for a one-hour entry. */
  written1h: number;
}

/** One block of the prompt in cache order; a breakpoint caches the prefix that ends with it. */
export interface CacheSegment {
  json: string;
  breakpoint: boolean;
  ttl?: '1h';
}

export class ClaudeState {
  readonly #key = randomBytes(32);
  readonly #cached = new Set<string>();

  #mac(text: string): string {
    return createHmac('sha256', this.#key).update(text).digest('base64');
  }

  sign(thinking: string): string {
    return this.#mac(`thinking:${thinking}`);
  }

  verify(thinking: string, signature: string): boolean {
    return signature === this.sign(thinking);
  }

  /** The opaque data of a redacted thinking block: a nonce and its MAC. */
  redacted(): string {
    const nonce = randomBytes(12).toString('base64');
    return Buffer.from(`${nonce}.${this.#mac(`redacted:${nonce}`)}`).toString('base64');
  }

  verifyRedacted(data: string): boolean {
    const [nonce, mac] = Buffer.from(data, 'base64').toString().split('.');
    return nonce !== undefined && mac !== undefined && mac === this.#mac(`redacted:${nonce}`);
  }

  /**
   * The prompt as segments in Claude's cache order (tools, system, then each message's blocks):
   * the longest prefix ending at a breakpoint that was cached before is read; the rest up to the
   * last breakpoint is written, each stretch with the lifetime of the breakpoint that ends it
   * (`ttl: "1h"` or five minutes); every breakpoint's prefix is cached from now on.
   */
  cache(model: string, segments: readonly CacheSegment[]): CacheUse {
    const hash = createHash('sha256').update(model);
    let size = 0;
    let read = 0;
    const ends: { size: number; hour: boolean }[] = [];
    const keys: string[] = [];
    for (const s of segments) {
      hash.update(s.json);
      size += tokens(s.json);
      if (!s.breakpoint) continue;
      const key = hash.copy().digest('hex');
      keys.push(key);
      if (this.#cached.has(key)) read = size;
      ends.push({ size, hour: s.ttl === '1h' });
    }
    for (const k of keys) this.#cached.add(k);
    let from = read;
    let written = 0;
    let written1h = 0;
    for (const end of ends) {
      if (end.size <= from) continue;
      written += end.size - from;
      if (end.hour) written1h += end.size - from;
      from = end.size;
    }
    return { read, written, written1h };
  }
}
