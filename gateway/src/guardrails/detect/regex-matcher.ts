import type { Candidate, SpanMatcher } from './types.ts';

/**
 * A built-in candidate pattern (our own, bounded, on RegExp: never a user pattern) with a validator.
 * `validate` returns the reported span inside the match (offsets relative to the match) or null.
 */
export function regexMatcher(
  pattern: RegExp,
  width: number,
  validate: (match: string) => { start: number; end: number } | null,
  behind = 1,
): SpanMatcher {
  if (!pattern.global && !pattern.sticky) throw new Error('regexMatcher needs a global pattern');
  return {
    reach: width + 1,
    behind,
    next(text: string, from: number): Candidate | null {
      pattern.lastIndex = from;
      const m = pattern.exec(text);
      if (m === null) return null;
      const start = m.index;
      const end = start + m[0].length;
      const span = validate(m[0]);
      return { start, end, hits: span ? [{ start: start + span.start, end: start + span.end }] : [] };
    },
  };
}

export const whole = (match: string): { start: number; end: number } => ({ start: 0, end: match.length });
