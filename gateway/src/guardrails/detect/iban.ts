import { getCountrySpecifications, isValidIBAN } from 'ibantools';
import { regexMatcher } from './regex-matcher.ts';

/**
 * IBANs, electronic (`DE89370400440532013000`) or grouped by single spaces (`DE89 3704 0044 …`):
 * the country's registered length, then ibantools' check of the BBAN format and the mod-97 checksum.
 */
const SPECS = getCountrySpecifications();
const CANDIDATE = /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]){10,30}(?![A-Za-z0-9])/g;

function validate(match: string): { start: number; end: number } | null {
  const length = SPECS[match.slice(0, 2)]?.chars;
  if (!length) return null;
  // Take exactly the country's number of characters; what follows (a next word) is not the IBAN.
  let count = 0;
  let i = 0;
  let compact = '';
  while (i < match.length && count < length) {
    if (match[i] !== ' ') {
      compact += match[i];
      count++;
    }
    i++;
  }
  if (count < length || (i < match.length && match[i] !== ' ')) return null;
  return isValidIBAN(compact) ? { start: 0, end: i } : null;
}

export const ibanMatcher = regexMatcher(CANDIDATE, 34 + 33, validate);
