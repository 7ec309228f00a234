import type { Candidate, SpanMatcher } from './types.ts';
import { isWordChar } from './words.ts';

/**
 * Deny lists match whole words or phrases (exact spacing) at word boundaries. Entries are indexed
 * by their first word, so a scan costs one map lookup per word of text whatever the list's size.
 */
export function denyListMatcher(words: readonly string[], caseInsensitive: boolean): SpanMatcher {
  const norm = (s: string): string => (caseInsensitive ? s.toLowerCase() : s);
  const byFirst = new Map<string, string[]>();
  let longest = 0;
  let longestFirst = 0;
  for (const raw of words) {
    const entry = norm(raw.trim());
    if (entry === '') continue;
    let k = 0;
    while (k < entry.length && isWordChar(entry, k)) k++;
    // An entry that does not start with a word character is keyed by its first character.
    const first = k === 0 ? entry[0]! : entry.slice(0, k);
    const list = byFirst.get(first) ?? [];
    if (!list.includes(entry)) list.push(entry);
    byFirst.set(first, list);
    longest = Math.max(longest, raw.length);
    longestFirst = Math.max(longestFirst, first.length);
  }
  for (const list of byFirst.values()) list.sort((a, b) => b.length - a.length);

  const matchAt = (text: string, p: number, list: string[]): number => {
    for (const entry of list) {
      const end = p + entry.length;
      if (end > text.length || norm(text.slice(p, end)) !== entry) continue;
      if (isWordChar(entry, entry.length - 1) && isWordChar(text, end)) continue;
      return end;
    }
    return -1;
  };

  return {
    reach: Math.max(longest, longestFirst) + 2,
    behind: 1,
    next(text: string, from: number): Candidate | null {
      let p = from;
      while (p < text.length) {
        if (!isWordChar(text, p)) {
          const list = byFirst.get(norm(text[p]!));
          const end = list === undefined ? -1 : matchAt(text, p, list);
          if (end > 0) return { start: p, end, hits: [{ start: p, end }] };
          p++;
          continue;
        }
        let q = p + 1;
        while (q < text.length && isWordChar(text, q)) q++;
        if (!isWordChar(text, p - 1) && q - p <= longestFirst) {
          const list = byFirst.get(norm(text.slice(p, q)));
          const end = list === undefined ? -1 : matchAt(text, p, list);
          if (end > 0) return { start: p, end, hits: [{ start: p, end }] };
        }
        p = q;
      }
      return null;
    },
  };
}
