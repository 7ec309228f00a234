/** The depth scan that guards JSON bodies, against JSON.parse's own view of the same texts. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonDepth, jsonTooDeep } from '#gateway/json/depth';

/** Depth of a parsed value, the slow and obvious way (for the values fast-check makes). */
function depthOf(v: unknown): number {
  if (typeof v !== 'object' || v === null) return 0;
  const children = Array.isArray(v) ? v : Object.values(v);
  return 1 + children.reduce<number>((d, c) => Math.max(d, depthOf(c)), 0);
}

describe('jsonDepth', () => {
  it('agrees with the parsed value on any JSON', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 8 }), (v) => {
        expect(jsonDepth(JSON.stringify(v))).toBe(depthOf(v));
      }),
      { seed: 7, numRuns: 500 },
    );
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    expect(jsonDepth('{"a":"[[[{{{"}')).toBe(1);
    expect(jsonDepth('["\\"[[[", "\\\\", [1]]')).toBe(2);
    expect(jsonDepth('"\\\\\\"{{{"')).toBe(0);
    expect(jsonDepth('[[["unterminated')).toBe(3);
  });

  it('stops at the limit, in linear time on 10 MB', () => {
    const deep = `${'['.repeat(5_000_000)}${']'.repeat(5_000_000)}`;
    const t = performance.now();
    expect(jsonTooDeep(deep, 64)).toBe(true);
    expect(jsonDepth(deep, 64)).toBe(65);
    const flat = JSON.stringify({ s: 'x'.repeat(10_000_000), a: [1, [2, [3]]] });
    expect(jsonTooDeep(flat, 64)).toBe(false);
    expect(jsonDepth(flat)).toBe(4);
    expect(performance.now() - t).toBeLessThan(2000);
  });
});
