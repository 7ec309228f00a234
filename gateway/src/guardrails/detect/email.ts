import type { Candidate, SpanMatcher } from './types.ts';

/**
 * E-mail addresses as people write them: an ASCII local part of at most 64 characters, `@`, then
 * two or more DNS labels ending in an alphabetic top-level label of 2 to 24 letters.
 */
const MAX_LOCAL = 64;
const MAX_DOMAIN = 253;

const isAlnum = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
// . _ % + - and alphanumerics
const isLocal = (c: number): boolean =>
  isAlnum(c) || c === 46 || c === 95 || c === 37 || c === 43 || c === 45;
const isAlpha = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

/** End of the longest valid domain starting at `i`, or -1. */
function domainEnd(text: string, i: number): number {
  let best = -1;
  let labels = 0;
  let pos = i;
  while (pos - i < MAX_DOMAIN) {
    let j = pos;
    let alpha = true;
    while (j < text.length && j - pos < 63) {
      const c = text.charCodeAt(j);
      if (isAlnum(c) || (c === 45 && j > pos)) {
        if (!isAlpha(c)) alpha = false;
        j++;
      } else break;
    }
    const len = j - pos;
    if (len === 0 || text.charCodeAt(j - 1) === 45) break;
    labels++;
    const next = j < text.length ? text.charCodeAt(j) : 32;
    if (isAlnum(next) || next === 45) break;
    if (labels >= 2 && alpha && len >= 2 && len <= 24) best = j;
    if (next !== 46) break;
    pos = j + 1;
  }
  return best;
}

export const emailMatcher: SpanMatcher = {
  reach: MAX_LOCAL + 1 + MAX_DOMAIN + 64 + 2,
  behind: 1,
  next(text: string, from: number): Candidate | null {
    let at = text.indexOf('@', from);
    while (at >= 0) {
      let s = at;
      while (s > 0 && at - s <= MAX_LOCAL && isLocal(text.charCodeAt(s - 1))) s--;
      if (at - s <= MAX_LOCAL && s >= from && s < at) {
        const end = domainEnd(text, at + 1);
        const dotEdge = text.charCodeAt(s) === 46 || text.charCodeAt(at - 1) === 46;
        if (end > 0 && !dotEdge) return { start: s, end, hits: [{ start: s, end }] };
      }
      at = text.indexOf('@', at + 1);
    }
    return null;
  },
};
