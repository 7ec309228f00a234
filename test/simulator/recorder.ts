/** Bounded log of received requests, so tests can assert what the gateway actually sent upstream. */
import type { IncomingHttpHeaders } from 'node:http';
import type { RecordedRequest } from './types.ts';

const CAPACITY = 1000;
const SECRET_HEADERS = new Set([
  'authorization',
  'api-key',
  'x-api-key',
  'x-goog-api-key',
  'x-amz-security-token',
  'cookie',
]);
export const REDACTED = '<redacted>';

export class Recorder {
  #ring: RecordedRequest[] = [];
  #next = 0;

  add(entry: RecordedRequest): void {
    if (this.#ring.length < CAPACITY) this.#ring.push(entry);
    else this.#ring[this.#next] = entry;
    this.#next = (this.#next + 1) % CAPACITY;
  }

  /** Oldest first. */
  list(): RecordedRequest[] {
    if (this.#ring.length < CAPACITY) return [...this.#ring];
    return [...this.#ring.slice(this.#next), ...this.#ring.slice(0, this.#next)];
  }

  clear(): void {
    this.#ring = [];
    this.#next = 0;
  }
}

export function safeHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name] = SECRET_HEADERS.has(name) ? REDACTED : Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/** Pathname plus query with a Gemini-style `key` parameter redacted. */
export function safePath(url: URL): string {
  if (!url.searchParams.has('key')) return url.pathname + url.search;
  const copy = new URL(url);
  copy.searchParams.set('key', REDACTED);
  return copy.pathname + copy.search;
}
