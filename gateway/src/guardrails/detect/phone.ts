import { type CountryCode, parsePhoneNumberFromString } from 'libphonenumber-js/min';
import { regexMatcher } from './regex-matcher.ts';
import type { SpanMatcher } from './types.ts';

/**
 * Phone numbers: a run of 7 to 15 digits written as a phone number (a leading `+` or `(`, or
 * separators between groups: bare digit runs are left alone), validated by libphonenumber-js (its "min" metadata: number lengths and leading digits per
 * region, ~80 KB) — international numbers as written, others against the rule's regions. The parser
 * only runs on runs that look like a number, so text without digits costs nothing.
 */
const CANDIDATE = /(?<![\w+.\-/])(?:\+|\(?)\d(?:[ ().\-/]{0,2}\d){6,16}\)?(?![\w])/g;
const DATE = /^\d{4}-\d{2}-\d{2}$|^\d{1,2}[./]\d{1,2}[./]\d{2,4}$/;
const IPV4 = /^\d{1,3}(?:\.\d{1,3}){3}$/;
const DOTTED = /^[\d.]+$/;
const BARE = /^\d+$/;
const LAST_SINGLE = /[^\d]\d$/;

export function phoneMatcher(regions: readonly string[]): SpanMatcher {
  const countries = regions.map((r) => r.toUpperCase() as CountryCode);
  const validate = (match: string): { start: number; end: number } | null => {
    const digits = match.replace(/\D/g, '').length;
    if (digits < 7 || digits > 15 || DATE.test(match) || IPV4.test(match)) return null;
    // Precision over recall: a bare run of digits is an ID, a timestamp or an amount far more often
    // than a phone number; dots mostly separate versions; a one-digit last group is a check digit.
    if (BARE.test(match)) return null;
    if (match.includes('.') && (!DOTTED.test(match) || digits < 10)) return null;
    if (LAST_SINGLE.test(match)) return null;
    const valid = match.startsWith('+')
      ? parsePhoneNumberFromString(match)?.isValid() === true
      : countries.some((c) => parsePhoneNumberFromString(match, c)?.isValid() === true);
    return valid ? { start: 0, end: match.length } : null;
  };
  return regexMatcher(new RegExp(CANDIDATE.source, 'g'), 2 + 17 * 3 + 1, validate);
}
