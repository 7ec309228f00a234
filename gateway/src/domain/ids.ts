import { randomFillSync } from 'node:crypto';

/** Random bytes drawn per refill; ids take 16–20 bytes each. */
const POOL_BYTES = 4096;
const pool = Buffer.allocUnsafe(POOL_BYTES);
let used = POOL_BYTES;

/**
 * `bytes` random bytes as hex, for ids a response names (message and response ids). Taken from a
 * pool filled 4 KB at a time: a `randomBytes` call per id is a system call each, ~18 µs of a
 * request's CPU on the bench machine under load. No byte is handed out twice. Not for secrets that
 * must not sit in process memory before use (tokens keep their own `randomBytes`).
 */
export function randomHex(bytes: number): string {
  if (bytes > POOL_BYTES) throw new RangeError(`randomHex takes at most ${POOL_BYTES} bytes`);
  if (used + bytes > POOL_BYTES) {
    randomFillSync(pool);
    used = 0;
  }
  const hex = pool.toString('hex', used, used + bytes);
  used += bytes;
  return hex;
}
