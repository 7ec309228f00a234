import type { GuardrailRule } from '#contract';
import { cardMatcher } from './cards.ts';
import { denyListMatcher } from './deny-list.ts';
import { emailMatcher } from './email.ts';
import { ibanMatcher } from './iban.ts';
import { injectionMatcher, injectionWeight } from './injection.ts';
import { nationalIdMatchers } from './national-ids.ts';
import { phoneMatcher } from './phone.ts';
import { compilePattern, maxWidth, re2Matcher, validatePattern } from './re2.ts';
import { secretMatchers } from './secrets.ts';
import type { Direction, Finding } from './types.ts';
import { makeFinding, runsOn, type ScoreState, sizeFinding, type Unit } from './units.ts';

/** The compiled rules of one scope: scan a whole text, or feed a StreamScanner. */
export interface CompiledRules {
  scan(text: string, direction: Direction): Finding[];
  /**
   * Longest possible match minus one: how much a stream holds back to catch split matches. A JWT or
   * a PEM block in progress is held until it ends (they are recognised by their first characters).
   */
  readonly holdBack: number;
}

export class InvalidRuleError extends Error {
  readonly code = 'guardrail_invalid_rule';
  readonly rule: string;
  readonly reason: string;
  constructor(rule: string, reason: string) {
    super(`guardrail rule ${rule}: ${reason}`);
    this.rule = rule;
    this.reason = reason;
  }
}

function unitsOf(rule: GuardrailRule): Unit[] {
  const d = rule.detector;
  switch (d.type) {
    case 'card':
      return [{ kind: 'span', rule, label: 'CARD', matcher: cardMatcher }];
    case 'secret':
      return secretMatchers().map((matcher) => ({ kind: 'span', rule, label: 'SECRET', matcher }));
    case 'iban':
      return [{ kind: 'span', rule, label: 'IBAN', matcher: ibanMatcher }];
    case 'phone':
      return [{ kind: 'span', rule, label: 'PHONE', matcher: phoneMatcher(d.regions) }];
    case 'nationalId':
      return nationalIdMatchers(d.kinds).map(({ label, matcher }) => ({
        kind: 'span',
        rule,
        label,
        matcher,
      }));
    case 'promptInjection':
      return [
        {
          kind: 'score',
          rule,
          label: 'INJECTION',
          matcher: injectionMatcher,
          threshold: d.threshold,
          weight: injectionWeight,
        },
      ];
    case 'email':
      return [{ kind: 'span', rule, label: 'EMAIL', matcher: emailMatcher }];
    case 'denyList':
      return [
        { kind: 'span', rule, label: 'DENY', matcher: denyListMatcher(d.words, d.caseInsensitive ?? true) },
      ];
    case 'pattern': {
      const check = validatePattern(d.pattern);
      if (!check.ok) throw new InvalidRuleError(rule.name, check.reason);
      const re = compilePattern(d.pattern, d.caseInsensitive ?? false);
      return [{ kind: 'span', rule, label: d.label, matcher: re2Matcher(re, maxWidth(re)) }];
    }
    case 'size': {
      const max: Partial<Record<Direction, number>> = {};
      if (d.maxInputChars !== undefined) max.input = d.maxInputChars;
      if (d.maxOutputChars !== undefined) max.output = d.maxOutputChars;
      return [{ kind: 'size', rule, label: 'SIZE', max }];
    }
    default:
      // webhook: an external call, run by the pipeline, not here.
      return [];
  }
}

export class Compiled implements CompiledRules {
  readonly units: readonly Unit[];
  readonly allow: ReadonlySet<string>;
  readonly holdBack: number;
  readonly behind: number;
  readonly #input: Unit[];
  readonly #output: Unit[];
  readonly #inputSize: number[];
  readonly #outputSize: number[];

  constructor(rules: readonly GuardrailRule[], allow: readonly string[]) {
    this.units = rules.flatMap(unitsOf);
    this.#input = this.units.filter((u) => runsOn(u.rule, 'input'));
    this.#output = this.units.filter((u) => runsOn(u.rule, 'output'));
    const sizeIndices = (us: Unit[]): number[] => us.flatMap((u, i) => (u.kind === 'size' ? [i] : []));
    this.#inputSize = sizeIndices(this.#input);
    this.#outputSize = sizeIndices(this.#output);
    this.allow = new Set(allow);
    let reach = 1;
    let behind = 0;
    for (const u of this.units) {
      if (u.kind === 'size') continue;
      reach = Math.max(reach, u.matcher.lead ?? u.matcher.reach);
      behind = Math.max(behind, u.matcher.behind);
    }
    this.holdBack = reach - 1;
    this.behind = behind;
  }

  /** Indices (into unitsFor(direction)) of the size units. */
  sizeUnitsFor(direction: Direction): number[] {
    return direction === 'input' ? this.#inputSize : this.#outputSize;
  }

  unitsFor(direction: Direction): Unit[] {
    return direction === 'input' ? this.#input : this.#output;
  }

  scan(text: string, direction: Direction): Finding[] {
    const out: Finding[] = [];
    for (const unit of this.unitsFor(direction)) {
      if (unit.kind === 'size') {
        const max = unit.max[direction];
        if (max !== undefined && text.length > max) out.push(sizeFinding(unit, text.length));
        continue;
      }
      // The whole text is here: walk the scan to its end (the stream's windowed walk is units.ts).
      const state: ScoreState = { score: 0, first: -1, done: false };
      const matcher = unit.matcher;
      let pos = 0;
      for (let c = matcher.next(text, 0); c !== null; c = matcher.next(text, pos)) {
        if (c.hits.length > 0) this.take(unit, text, c.hits, state, 0, out);
        pos = c.end > c.start ? c.end : c.start + 1;
      }
    }
    return sortFindings(out);
  }

  /** Turns a candidate's hits into findings (allow-listed values dropped; score units accumulate). */
  take(
    unit: Unit,
    text: string,
    hits: readonly { start: number; end: number }[],
    state: ScoreState,
    offset: number,
    out: Finding[],
  ): void {
    for (const h of hits) {
      if (this.allow.size > 0 && this.allow.has(text.slice(h.start, h.end))) continue;
      if (unit.kind === 'span') out.push(makeFinding(unit, text, h.start, h.end, offset));
      else if (unit.kind === 'score' && !state.done) {
        if (state.first < 0) state.first = h.start + offset;
        state.score += unit.weight(h, text);
        if (state.score >= unit.threshold) {
          state.done = true;
          const f = makeFinding(unit, text, h.start, h.end, offset);
          out.push({ ...f, start: state.first });
        }
      }
    }
  }
}

export const sortFindings = (fs: Finding[]): Finding[] =>
  fs.sort(
    (a, b) =>
      a.start - b.start || a.end - b.end || a.rule.localeCompare(b.rule) || a.label.localeCompare(b.label),
  );

/** Compiles rules for scanning; `allow` values are never reported. Throws InvalidRuleError on a bad pattern. */
export function compileRules(rules: readonly GuardrailRule[], allow: readonly string[] = []): CompiledRules {
  return new Compiled(rules, allow);
}
