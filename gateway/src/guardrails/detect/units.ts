import type { GuardrailMode, GuardrailRule } from '#contract';
import { valueHash } from './hash.ts';
import type { Candidate, Direction, Finding, Hit, SpanMatcher } from './types.ts';

/**
 * A compiled rule as the engine runs it. `span` units report every hit; `score` units (prompt
 * injection) add up weighted hits and report once, when the total reaches the threshold; `size`
 * units compare the text's length with a limit.
 */
export type Unit =
  | { kind: 'span'; rule: GuardrailRule; label: string; matcher: SpanMatcher }
  | {
      kind: 'score';
      rule: GuardrailRule;
      label: string;
      matcher: SpanMatcher;
      threshold: number;
      weight: (hit: Hit, text: string) => number;
    }
  | { kind: 'size'; rule: GuardrailRule; label: string; max: Partial<Record<Direction, number>> };

export const runsOn = (rule: GuardrailRule, direction: Direction): boolean =>
  rule.direction === 'both' || rule.direction === direction;

export function makeFinding(unit: Unit, text: string, start: number, end: number, offset = 0): Finding {
  return {
    rule: unit.rule.name,
    detector: unit.rule.detector.type,
    mode: unit.rule.mode as GuardrailMode,
    label: unit.label,
    start: start + offset,
    end: end + offset,
    hash: valueHash(text.slice(start, end)),
  };
}

/** A size finding covers the text so far; its hash is of the length, the one thing it is about. */
export const sizeFinding = (unit: Unit, length: number): Finding => ({
  ...makeFinding(unit, '', 0, 0),
  end: length,
  hash: valueHash(String(length)),
});

/** Where a score unit stands so far in a text: carried across a stream's windows. */
export interface ScoreState {
  score: number;
  first: number;
  done: boolean;
}

/**
 * Walks one matcher's scan over `text` from `from`. With `final` false the text is a prefix of a
 * longer one: a candidate is only taken when the characters that decide it are all present
 * (start + reach ≤ length). Candidates with hits go into `taken`. Returns where the next walk must
 * resume so that it continues exactly as a walk over the whole text would.
 */
export function walk(
  matcher: SpanMatcher,
  text: string,
  from: number,
  final: boolean,
  taken: Candidate[],
): number {
  let pos = from;
  for (;;) {
    const c = matcher.next(text, pos);
    const undecided =
      c !== null &&
      !final &&
      (matcher.decided ? !matcher.decided(text, c) : c.start + matcher.reach > text.length);
    if (c === null || undecided) {
      if (final) return text.length;
      const lead = matcher.lead ?? matcher.reach;
      let resume = Math.max(pos, Math.min(undecided ? c.start : text.length, text.length - lead));
      // Never resume between the halves of a surrogate pair.
      const code = text.charCodeAt(resume);
      if (resume > pos && code >= 0xdc00 && code <= 0xdfff) resume--;
      return resume;
    }
    if (c.hits.length > 0) taken.push(c);
    pos = c.end > c.start ? c.end : c.start + 1;
  }
}
