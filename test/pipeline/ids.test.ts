import { expect, it } from 'vitest';
import { randomHex } from '#gateway/domain/ids';

it('hands out hex of the asked length, never the same bytes twice, across pool refills', () => {
  // 20 bytes × 2,000 ids is ten refills of the 4 KB pool.
  const ids = Array.from({ length: 2000 }, () => randomHex(20));
  for (const id of ids) expect(id).toMatch(/^[0-9a-f]{40}$/);
  expect(new Set(ids).size).toBe(ids.length);
  expect(randomHex(16)).toMatch(/^[0-9a-f]{32}$/);
  expect(() => randomHex(4097)).toThrow(RangeError);
});
