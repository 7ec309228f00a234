import { describe, expect, it } from 'vitest';
import { compileRules, InvalidRuleError, validatePattern } from '#gateway/guardrails/detect/index';
import { compilePattern } from '#gateway/guardrails/detect/re2';
import { rule } from './rules.ts';

describe('user patterns: RE2 syntax, linear time, bounded length', () => {
  it('accepts ordinary RE2 patterns', () => {
    for (const p of [
      'TICKET-[0-9]{3,8}',
      '(?i)project (falcon|eagle)',
      '\\bEMP[0-9]{6}\\b',
      '[\\p{Greek}]{2,5}',
    ])
      expect(validatePattern(p), p).toEqual({ ok: true });
  });

  it('refuses what RE2 cannot compile: lookarounds, backreferences, possessive quantifiers, bad syntax', () => {
    for (const p of ['(?=a)b', '(?!a)b', '(?<=a)b', '(?<!a)b', '(a)\\1', 'a++', '(unclosed', '[z-a]']) {
      const r = validatePattern(p);
      expect(r.ok, p).toBe(false);
      if (!r.ok) expect(r.reason).toMatch(/RE2/);
    }
  });

  it('refuses unbounded, too long, too large and empty-matching patterns, saying why', () => {
    const cases: [string, RegExp][] = [
      ['(a+)+$', /unbounded/],
      ['secret.*', /unbounded/],
      ['x{2,}', /unbounded/],
      ['[a-z]{600}', /up to 600 characters/],
      ['a'.repeat(1001), /longer than 1000/],
      ['a?', /empty string/],
      ['', /empty/],
    ];
    for (const [p, why] of cases) {
      const r = validatePattern(p);
      expect(r.ok, p).toBe(false);
      if (!r.ok) expect(r.reason).toMatch(why);
    }
  });

  it('compileRules refuses an invalid pattern with a typed error naming the rule', () => {
    expect(() => compileRules([rule('bad', { type: 'pattern', label: 'X', pattern: '(?=a)' })])).toThrow(
      InvalidRuleError,
    );
  });

  it('runs the catastrophic-backtracking pattern (a+)+$ in linear time on re2js', () => {
    // The shape that takes exponential time on a backtracking engine: a run of a's and one b.
    const re = compilePattern('(a+)+$');
    const time = (n: number): number => {
      const text = `${'a'.repeat(n)}b`;
      const t0 = performance.now();
      for (let i = 0; i < 5; i++) re.matcher(text).find();
      return (performance.now() - t0) / 5;
    };
    time(1000);
    const small = time(2_000);
    const large = time(16_000);
    console.log(`(a+)+$ on re2js: 2k chars ${small.toFixed(2)} ms, 16k chars ${large.toFixed(2)} ms`);
    // 8x the input: linear is ~8x; anything polynomial or exponential would be far beyond 40x.
    expect(large).toBeLessThan(Math.max(small, 0.05) * 40);
    expect(large).toBeLessThan(2_000);
  });
});
