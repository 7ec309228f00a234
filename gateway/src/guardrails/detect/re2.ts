import { RE2JS } from 're2js';
import { GUARDRAIL } from '#contract';
import type { Candidate, SpanMatcher } from './types.ts';

/**
 * User patterns and the vendored secret rules run on re2js, a linear-time RE2 port: no pattern can
 * backtrack, whatever the input. A pattern must also have a bounded match length, because a stream
 * holds back that many characters to catch a match split across chunks.
 */
export const MAX_PATTERN_WIDTH = 512;
const MAX_PROGRAM_SIZE = 20_000;

// re2js's compiled program (not in its typings): instructions with an opcode and successors.
interface ProgInst {
  op: number;
  out: number;
  arg: number;
  runes: Int32Array;
}
interface Prog {
  inst: ProgInst[];
  start: number;
}
const ALT = 1;
const ALT_MATCH = 2;
const MATCH = 6;
const FAIL = 5;
const RUNE = 8;
const RUNE_ANY = 10;
const RUNE_ANY_NOT_NL = 11;

/** UTF-16 units one rune instruction can consume: 2 when it can match outside the BMP. */
const runeWidth = (inst: ProgInst): number => {
  if (inst.op === RUNE_ANY || inst.op === RUNE_ANY_NOT_NL) return 2;
  const max = inst.runes.length === 0 ? 0 : inst.runes[inst.runes.length - 1]!;
  return max > 0xffff ? 2 : 1;
};

/** The longest match a compiled pattern can produce, in UTF-16 units; Infinity when unbounded. */
export function maxWidth(re: RE2JS): number {
  const prog = (re.re2() as unknown as { prog: Prog }).prog;
  const memo = new Map<number, number>();
  const onPath = new Set<number>();
  const visit = (pc: number): number => {
    const known = memo.get(pc);
    if (known !== undefined) return known;
    if (onPath.has(pc)) return Number.POSITIVE_INFINITY;
    onPath.add(pc);
    const inst = prog.inst[pc]!;
    let width: number;
    if (inst.op === MATCH || inst.op === FAIL) width = 0;
    else if (inst.op === ALT || inst.op === ALT_MATCH) width = Math.max(visit(inst.out), visit(inst.arg));
    else if (inst.op >= RUNE && inst.op <= RUNE_ANY_NOT_NL) width = runeWidth(inst) + visit(inst.out);
    else width = visit(inst.out);
    onPath.delete(pc);
    memo.set(pc, width);
    return width;
  };
  return visit(prog.start);
}

export type PatternCheck = { ok: true } | { ok: false; reason: string };

export function compilePattern(pattern: string, caseInsensitive = false): RE2JS {
  return RE2JS.compile(pattern, caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
}

/**
 * What the operator runs when a Guardrail is applied: RE2 syntax only (no lookarounds, no
 * backreferences), within the length and program-size limits, and a bounded match length.
 */
export function validatePattern(pattern: string): PatternCheck {
  if (pattern.length === 0) return { ok: false, reason: 'the pattern is empty' };
  if (pattern.length > GUARDRAIL.maxPatternLength)
    return { ok: false, reason: `the pattern is longer than ${GUARDRAIL.maxPatternLength} characters` };
  let re: RE2JS;
  try {
    re = compilePattern(pattern);
  } catch (err) {
    return { ok: false, reason: `not valid RE2 syntax: ${(err as Error).message}` };
  }
  if (re.programSize() > MAX_PROGRAM_SIZE)
    return { ok: false, reason: `the compiled pattern is too large (over ${MAX_PROGRAM_SIZE} instructions)` };
  const width = maxWidth(re);
  if (!Number.isFinite(width))
    return {
      ok: false,
      reason:
        'unbounded repetition (+, *, {n,}): a guardrail pattern needs a bounded match length so streams can be checked across chunks; write e.g. {1,40}',
    };
  if (width > MAX_PATTERN_WIDTH)
    return {
      ok: false,
      reason: `the pattern can match up to ${width} characters; the limit is ${MAX_PATTERN_WIDTH}`,
    };
  if (re.matcher('').find()) return { ok: false, reason: 'the pattern matches the empty string' };
  return { ok: true };
}

/**
 * A compiled RE2 pattern as a span matcher. `group` names the capture reported (0: the whole
 * match); `accept` may reject a match after the fact (an entropy floor, an allowlist).
 */
export function re2Matcher(
  re: RE2JS,
  width: number,
  group = 0,
  accept?: (value: string) => boolean,
): SpanMatcher {
  return {
    reach: width + 1,
    behind: 1,
    next(text: string, from: number): Candidate | null {
      const m = re.matcher(text);
      if (!m.find(from)) return null;
      const start = m.start();
      const end = m.end();
      let hs = group === 0 ? start : m.start(group);
      let he = group === 0 ? end : m.end(group);
      if (hs < 0) {
        hs = start;
        he = end;
      }
      const ok = he > hs && (accept === undefined || accept(text.slice(hs, he)));
      return { start, end, hits: ok ? [{ start: hs, end: he }] : [] };
    },
  };
}
