import { randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { KEY_PREFIX } from '../resources/apikey.ts';

/**
 * Generated API keys: `sy_live_` + 43 base62 characters of randomness (256 bits) + 6 base62
 * characters of CRC32 over prefix and body. The fixed prefix and the checksum let secret scanners
 * find keys and tell real ones from look-alikes without a database lookup.
 *
 *   sy_live_<43 random base62><6 checksum base62>   (57 characters)
 */

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
export const RANDOM_CHARS = 43;
export const CHECKSUM_CHARS = 6;
export const GENERATED_KEY_LENGTH = KEY_PREFIX.length + RANDOM_CHARS + CHECKSUM_CHARS;
/** log2(62) * 43 ≈ 256 bits. */
export const RANDOM_BITS = Math.floor(Math.log2(62) * RANDOM_CHARS);

/** Uniform base62 characters by rejection sampling (bytes ≥ 248 are discarded, so no modulo bias). */
export function randomBase62(length: number, random: (n: number) => Buffer = randomBytes): string {
  let out = '';
  while (out.length < length) {
    for (const b of random(Math.ceil((length - out.length) * 1.1) + 4)) {
      if (b >= 248) continue;
      out += ALPHABET[b % 62];
      if (out.length === length) break;
    }
  }
  return out;
}

export function base62Fixed(n: number, width: number): string {
  let s = '';
  let v = n >>> 0;
  for (let i = 0; i < width; i++) {
    s = ALPHABET[v % 62] + s;
    v = Math.floor(v / 62);
  }
  return s;
}

export const keyChecksum = (prefixAndBody: string): string =>
  base62Fixed(crc32(Buffer.from(prefixAndBody, 'utf8')), CHECKSUM_CHARS);

export function generateApiKey(random?: (n: number) => Buffer): string {
  const body = `${KEY_PREFIX}${randomBase62(RANDOM_CHARS, random)}`;
  return body + keyChecksum(body);
}

/** True for a key this operator generated (prefix, length, alphabet and checksum all match). */
export function hasValidChecksum(key: string): boolean {
  if (key.length !== GENERATED_KEY_LENGTH || !key.startsWith(KEY_PREFIX)) return false;
  if (!/^[0-9A-Za-z]+$/.test(key.slice(KEY_PREFIX.length))) return false;
  const split = key.length - CHECKSUM_CHARS;
  return keyChecksum(key.slice(0, split)) === key.slice(split);
}

/** The only part of a key that may appear in status, logs or Events. */
export const keyPrefixOf = (key: string): string => key.slice(0, 12);
