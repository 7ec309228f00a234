import type { NATIONAL_ID_KINDS } from '#contract';
import { regexMatcher, whole } from './regex-matcher.ts';
import type { SpanMatcher } from './types.ts';

/** National identifiers, each checked beyond its shape (reserved ranges, check digits). */
export type NationalIdKind = (typeof NATIONAL_ID_KINDS)[number];
type Span = { start: number; end: number } | null;
const digitsOf = (s: string): number[] => [...s.replace(/\D/g, '')].map(Number);

/** US SSN, written with dashes or spaces: area not 000, 666 or 9xx; group not 00; serial not 0000. */
function ssn(match: string): Span {
  const d = match.replace(/\D/g, '');
  const area = Number(d.slice(0, 3));
  if (area === 0 || area === 666 || area >= 900) return null;
  if (d.slice(3, 5) === '00' || d.slice(5) === '0000') return null;
  // Numbers printed on sample cards and in advertising, never issued to a person.
  if (d === '078051120' || d === '219099999') return null;
  return whole(match);
}

/** UK National Insurance number: HMRC's excluded letters and prefixes, suffix A-D. */
function nino(match: string): Span {
  const s = match.replace(/\s/g, '').toUpperCase();
  if (/[DFIQUV]/.test(s[0]!) || /[DFIOQUV]/.test(s[1]!)) return null;
  if (['BG', 'GB', 'KN', 'NK', 'NT', 'TN', 'ZZ'].includes(s.slice(0, 2))) return null;
  return whole(match);
}

/** German tax ID (Steuer-ID): 11 digits, no leading 0, one digit repeated in the first ten, ISO 7064 MOD 11,10. */
function steuerId(match: string): Span {
  const d = digitsOf(match);
  if (d.length !== 11 || d[0] === 0) return null;
  const counts = new Map<number, number>();
  for (const x of d.slice(0, 10)) counts.set(x, (counts.get(x) ?? 0) + 1);
  const repeats = [...counts.values()].filter((c) => c > 1);
  if (repeats.length !== 1 || repeats[0]! > 3) return null;
  let product = 10;
  for (let i = 0; i < 10; i++) {
    let sum = (d[i]! + product) % 10;
    if (sum === 0) sum = 10;
    product = (sum * 2) % 11;
  }
  const check = (11 - product) % 10;
  return check === d[10] ? whole(match) : null;
}

/** French NIR (numéro de sécurité sociale): sex, year, month, department (2A/2B for Corsica), key = 97 - n mod 97. */
function nir(match: string): Span {
  const s = match.replace(/\s/g, '').toUpperCase();
  const month = Number(s.slice(3, 5));
  if (!((month >= 1 && month <= 12) || (month >= 20 && month <= 42) || month >= 50)) return null;
  const body = s.slice(0, 13).replace('2A', '19').replace('2B', '18');
  const key = Number(s.slice(13));
  return 97 - Number(BigInt(body) % 97n) === key ? whole(match) : null;
}

// Verhoeff tables (dihedral group D5).
const V_D = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  [1, 2, 3, 4, 0, 6, 7, 8, 9, 5],
  [2, 3, 4, 0, 1, 7, 8, 9, 5, 6],
  [3, 4, 0, 1, 2, 8, 9, 5, 6, 7],
  [4, 0, 1, 2, 3, 9, 5, 6, 7, 8],
  [5, 9, 8, 7, 6, 0, 4, 3, 2, 1],
  [6, 5, 9, 8, 7, 1, 0, 4, 3, 2],
  [7, 6, 5, 9, 8, 2, 1, 0, 4, 3],
  [8, 7, 6, 5, 9, 3, 2, 1, 0, 4],
  [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
];
const V_P = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
  [1, 5, 7, 6, 2, 8, 3, 0, 9, 4],
  [5, 8, 0, 3, 7, 9, 6, 1, 4, 2],
  [8, 9, 1, 6, 0, 4, 3, 5, 2, 7],
  [9, 4, 5, 3, 1, 2, 6, 8, 7, 0],
  [4, 2, 8, 6, 5, 7, 3, 9, 0, 1],
  [2, 7, 9, 3, 8, 0, 6, 4, 1, 5],
  [7, 0, 4, 6, 9, 1, 3, 2, 5, 8],
];

export function verhoeffValid(digits: readonly number[]): boolean {
  let c = 0;
  for (let i = 0; i < digits.length; i++) c = V_D[c]![V_P[i % 8]![digits[digits.length - 1 - i]!]!]!;
  return c === 0;
}

/** Indian Aadhaar: 12 digits, first not 0 or 1, Verhoeff check digit. */
function aadhaar(match: string): Span {
  const d = digitsOf(match);
  return d.length === 12 && d[0]! >= 2 && verhoeffValid(d) ? whole(match) : null;
}

const B = '(?<![\\w-])';
const E = '(?![\\w-])';
const SPEC: Record<
  NationalIdKind,
  { label: string; pattern: string; width: number; validate: (m: string) => Span }
> = {
  'us-ssn': { label: 'US_SSN', pattern: `${B}\\d{3}([- ])\\d{2}\\1\\d{4}${E}`, width: 11, validate: ssn },
  'uk-nino': {
    label: 'UK_NINO',
    pattern: `${B}[A-Za-z]{2} ?\\d{2} ?\\d{2} ?\\d{2} ?[A-Da-d]${E}`,
    width: 13,
    validate: nino,
  },
  'de-steuer-id': {
    label: 'DE_STEUER_ID',
    pattern: `${B}[1-9]\\d(?: ?\\d{3}){3}${E}`,
    width: 14,
    validate: steuerId,
  },
  'fr-nir': {
    label: 'FR_NIR',
    pattern: `${B}[12] ?\\d{2} ?\\d{2} ?(?:\\d{2}|2[ABab]) ?\\d{3} ?\\d{3} ?\\d{2}${E}`,
    width: 21,
    validate: nir,
  },
  'in-aadhaar': {
    label: 'IN_AADHAAR',
    pattern: `${B}[2-9]\\d{3}([ -]?)\\d{4}\\1\\d{4}${E}`,
    width: 14,
    validate: aadhaar,
  },
};

export function nationalIdMatchers(
  kinds: readonly NationalIdKind[],
): { label: string; matcher: SpanMatcher }[] {
  return [...new Set(kinds)].map((kind) => {
    const s = SPEC[kind];
    return { label: s.label, matcher: regexMatcher(new RegExp(s.pattern, 'g'), s.width, s.validate) };
  });
}
