import type { Candidate, SpanMatcher } from './types.ts';

/**
 * Secrets too long for a fixed window, recognised by how they start: JSON Web Tokens and PEM private
 * keys. A stream holds one back only once its first characters have arrived, until it ends.
 */
const MAX_JWT = 8192;
const MAX_PEM = 16384;

// base64url, the dots between a JWT's parts, and what gitleaks also admits (/ + =).
const isJwtChar = (c: number): boolean =>
  (c >= 48 && c <= 57) ||
  (c >= 65 && c <= 90) ||
  (c >= 97 && c <= 122) ||
  c === 95 ||
  c === 45 ||
  c === 46 ||
  c === 61 ||
  c === 47 ||
  c === 43;

/** A JWT's header is base64url JSON naming its algorithm: decode it rather than trust the shape. */
function jwtValid(token: string): boolean {
  const parts = token.split('.');
  if (parts.length !== 3 || !parts[0]!.startsWith('eyJ') || !parts[1]!.startsWith('ey')) return false;
  if (parts[0]!.length < 10 || parts[1]!.length < 10) return false;
  try {
    const header: unknown = JSON.parse(Buffer.from(parts[0]!, 'base64url').toString('utf8'));
    return (
      typeof header === 'object' && header !== null && typeof (header as { alg?: unknown }).alg === 'string'
    );
  } catch {
    return false;
  }
}

export const jwtMatcher: SpanMatcher = {
  reach: MAX_JWT + 1,
  behind: 1,
  lead: 2,
  decided: (text, c) => c.end < text.length || c.end - c.start > MAX_JWT,
  next(text: string, from: number): Candidate | null {
    let i = text.indexOf('ey', from);
    while (i >= 0) {
      if (i === 0 || !isJwtChar(text.charCodeAt(i - 1))) {
        let e = i + 2;
        while (e < text.length && e - i <= MAX_JWT && isJwtChar(text.charCodeAt(e))) e++;
        // A trailing dot or padding belongs to the sentence, not the token.
        let end = e;
        while (end > i && (text.charCodeAt(end - 1) === 46 || text.charCodeAt(end - 1) === 61)) end--;
        const ok = e - i <= MAX_JWT && jwtValid(text.slice(i, end));
        return { start: i, end: e, hits: ok ? [{ start: i, end }] : [] };
      }
      i = text.indexOf('ey', i + 1);
    }
    return null;
  },
};

// Lazy, so the first complete marker is the match: more text can never make a found marker longer
// (a greedy one could run on through "-----END … KEY----------BEGIN … KEY-----").
const PEM_BEGIN = /-----BEGIN[ A-Z0-9_-]{0,100}?PRIVATE KEY(?: BLOCK)?-----/iy;
const PEM_END = /-----END[ A-Z0-9_-]{0,100}?PRIVATE KEY(?: BLOCK)?-----/iy;
const PEM_HEADER_MAX = 140;

export const pemMatcher: SpanMatcher = {
  reach: MAX_PEM + 1,
  behind: 0,
  lead: PEM_HEADER_MAX,
  // An end marker seen, or the size limit reached; otherwise the block may go on.
  decided: (text, c) => c.end < text.length || c.end - c.start >= MAX_PEM,
  next(text: string, from: number): Candidate | null {
    let i = text.indexOf('-----BEGIN', from);
    while (i >= 0) {
      PEM_BEGIN.lastIndex = i;
      if (PEM_BEGIN.test(text)) {
        const limit = Math.min(text.length, i + MAX_PEM);
        let j = text.indexOf('-----END', PEM_BEGIN.lastIndex);
        while (j >= 0 && j < limit) {
          PEM_END.lastIndex = j;
          if (PEM_END.test(text) && PEM_END.lastIndex <= limit)
            return { start: i, end: PEM_END.lastIndex, hits: [{ start: i, end: PEM_END.lastIndex }] };
          j = text.indexOf('-----END', j + 1);
        }
        // No end marker (yet, or ever): the block runs to the limit or the end of the text.
        return { start: i, end: limit, hits: [{ start: i, end: limit }] };
      }
      i = text.indexOf('-----BEGIN', i + 1);
    }
    return null;
  },
};
