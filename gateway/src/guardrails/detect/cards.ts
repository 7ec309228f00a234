import type { Candidate, SpanMatcher } from './types.ts';

/**
 * Payment card numbers: 12 to 19 digits, optionally grouped by single spaces or dashes, that pass
 * the Luhn check and carry a known brand's prefix at one of that brand's lengths.
 */
const MAX_DIGITS = 19;
const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const isAlnum = (c: number): boolean => isDigit(c) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);

export function luhn(digits: string): boolean {
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

const between = (digits: string, n: number, lo: number, hi: number): boolean => {
  const v = Number(digits.slice(0, n));
  return v >= lo && v <= hi;
};

/** Issuer prefixes and the lengths each brand issues (Visa, Mastercard, Amex, Discover, Diners, JCB, UnionPay, Maestro). */
export function brandFits(digits: string): boolean {
  const n = digits.length;
  const c = digits[0];
  if (c === '4') return n === 13 || n === 16 || n === 19;
  if (between(digits, 2, 51, 55) || between(digits, 4, 2221, 2720)) return n === 16;
  if (between(digits, 2, 34, 34) || between(digits, 2, 37, 37)) return n === 15;
  if (digits.startsWith('6011') || between(digits, 3, 644, 649) || digits.startsWith('65'))
    return n >= 16 && n <= 19;
  if (
    between(digits, 3, 300, 305) ||
    digits.startsWith('36') ||
    digits.startsWith('38') ||
    digits.startsWith('39')
  )
    return n >= 14 && n <= 19;
  if (between(digits, 4, 3528, 3589)) return n >= 16 && n <= 19;
  if (digits.startsWith('62')) return n >= 16 && n <= 19;
  if (digits.startsWith('50') || between(digits, 2, 56, 69)) return n >= 12 && n <= 19;
  return false;
}

const valid = (digits: string): boolean =>
  digits.length >= 12 && !/^(\d)\1*$/.test(digits) && brandFits(digits) && luhn(digits);

/**
 * A run of up to 20 digits (one past the longest card) with single separators between them, where
 * the character before is neither a letter/digit nor a separator after a digit. The engine's
 * regular expressions scan far faster than a loop over characters.
 */
const RUN = /\d(?:[ -]?\d){0,19}/g;

const runStart = (text: string, i: number): boolean => {
  if (i === 0) return true;
  const p = text.charCodeAt(i - 1);
  if (isAlnum(p)) return false;
  return !((p === 32 || p === 45) && i >= 2 && isDigit(text.charCodeAt(i - 2)));
};

export const cardMatcher: SpanMatcher = {
  reach: 2 * MAX_DIGITS + 6,
  behind: 2,
  next(text: string, from: number): Candidate | null {
    RUN.lastIndex = from;
    let m = RUN.exec(text);
    // A match that does not start a run is the tail of a longer one: never a candidate.
    while (m !== null && !runStart(text, m.index)) m = RUN.exec(text);
    if (m === null) return null;
    const start = m.index;
    const end = start + m[0].length;
    const digits = m[0].replace(/[ -]/g, '');
    const after = end < text.length ? text.charCodeAt(end) : 32;
    const ok = digits.length <= MAX_DIGITS && !isAlnum(after) && valid(digits);
    return { start, end, hits: ok ? [{ start, end }] : [] };
  },
};
