import { describe, expect, it } from 'vitest';
import { BoundedMap } from '#gateway/domain/bounded-map';

describe('BoundedMap', () => {
  it('holds what it is given under its limit', () => {
    const m = new BoundedMap<string, number>(3);
    expect(m.set('a', 1)).toBe(1);
    m.set('b', 2);
    m.set('c', 3);
    expect([m.get('a'), m.get('b'), m.get('c'), m.get('d')]).toEqual([1, 2, 3, undefined]);
    expect(m.size).toBe(3);
  });

  it('at its limit, a new key forgets the entry added first', () => {
    const m = new BoundedMap<string, number>(3);
    m.set('a', 1);
    m.set('b', 2);
    m.set('c', 3);
    m.set('d', 4);
    expect(m.size).toBe(3);
    expect([m.get('a'), m.get('b'), m.get('c'), m.get('d')]).toEqual([undefined, 2, 3, 4]);
    m.set('e', 5);
    expect([m.get('b'), m.get('c'), m.get('d'), m.get('e')]).toEqual([undefined, 3, 4, 5]);
  });

  it('replacing a key it holds forgets nothing', () => {
    const m = new BoundedMap<string, number>(2);
    m.set('a', 1);
    m.set('b', 2);
    m.set('a', 10);
    expect(m.size).toBe(2);
    expect([m.get('a'), m.get('b')]).toEqual([10, 2]);
  });

  it('never holds more than its limit, however many keys it is given', () => {
    const m = new BoundedMap<number, number>(100);
    for (let i = 0; i < 10_000; i++) m.set(i, i * 2);
    expect(m.size).toBe(100);
    expect(m.get(9_899)).toBeUndefined();
    expect(m.get(9_900)).toBe(19_800);
    expect(m.get(9_999)).toBe(19_998);
  });

  it('a limit of 1 keeps the last key', () => {
    const m = new BoundedMap<string, string>(1);
    m.set('a', 'x');
    m.set('b', 'y');
    expect([m.get('a'), m.get('b'), m.size]).toEqual([undefined, 'y', 1]);
  });

  it('refuses a limit that is not a positive integer', () => {
    expect(() => new BoundedMap(0)).toThrow(RangeError);
    expect(() => new BoundedMap(-1)).toThrow('limit must be a positive integer: -1');
    expect(() => new BoundedMap(1.5)).toThrow(RangeError);
  });
});
