import { getHeapSpaceStatistics } from 'node:v8';
import { expect, test } from 'vitest';
import { releaseStartupMemory } from '#contract';

const newSpaceMb = () =>
  (getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0) / 2 ** 20;

test('the start-up collection shrinks the young generation start-up grew', () => {
  // What loading modules does to the young generation: many short-lived objects, some kept.
  let kept: object[] = [];
  for (let i = 0; i < 2_000_000; i++) {
    const o = { i, s: `item ${i}` };
    if (i % 50 === 0) kept.push(o);
  }
  const grown = newSpaceMb();
  kept = [];
  releaseStartupMemory();
  const after = newSpaceMb();
  process.stdout.write(`young generation: ${grown.toFixed(1)} MB grown, ${after.toFixed(1)} MB after\n`);
  expect(grown).toBeGreaterThan(4);
  expect(after).toBeLessThan(grown / 2);
  expect((globalThis as { gc?: unknown }).gc).toBeUndefined();
});
