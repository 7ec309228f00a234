import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CapRef, GuardStore, RateRef } from '#gateway/spend/store';

export interface StoreUnderTest {
  store: GuardStore;
  /** Spent µUSD of a cap key as the operator reads it (GET on Redis). */
  spent(key: string): Promise<number>;
  close(): Promise<void>;
}

let seq = 0;
const pid = (name: string) => `ns${process.pid}.${name}-${++seq}`;
const cap = (project: string, limitMicros: number, name = 'c'): CapRef => ({
  key: `switchyard:{p:${project}}:spend:project:test-${name}`,
  limitMicros,
  ttlSec: 3600,
});
const rate = (project: string, perSecond: number, burst: number, name = 'r', cost = 1): RateRef => ({
  key: `switchyard:{p:${project}}:rl:${name}`,
  intervalUs: 1_000_000 / perSecond,
  burst,
  cost,
});
const T = 1_000_000_000_000;

/**
 * The rules of rate limits and spend caps, the same on every backend (memory, Redis, Redis
 * Cluster). Spend uses the caller's clock (passed in); rate limits use the store's (Redis TIME),
 * so the rate cases use small real intervals.
 */
export function guardStoreContract(name: string, setup: () => Promise<StoreUnderTest>): void {
  describe(`guard store contract: ${name}`, () => {
    let sut: StoreUnderTest;
    let store: GuardStore;
    beforeAll(async () => {
      sut = await setup();
      store = sut.store;
    });
    afterAll(async () => {
      await sut?.close();
    });

    const reserve = (member: string, amount: number, caps: CapRef[], nowMs = T, deadlineMs = T + 60_000) =>
      store.reserve({ member, amountMicros: amount, deadlineMs, nowMs, rates: [], caps });

    it('admits while spent plus reserved is below the limit, then refuses with the spent amount', async () => {
      const c = cap(pid('cap'), 1000);
      expect((await reserve('a', 600, [c])).ok).toBe(true);
      expect((await reserve('b', 600, [c])).ok).toBe(true); // 600 < 1000: one more estimate may go
      const refused = await reserve('c', 1, [c]);
      expect(refused).toMatchObject({
        ok: false,
        kind: 'cap',
        index: 0,
        spentMicros: 0,
        reservedMicros: 1200,
      });
      await store.settle({ member: 'a', nowMs: T, caps: [{ ...c, actualMicros: 100 }] });
      await store.settle({ member: 'b', nowMs: T, caps: [{ ...c, actualMicros: 200 }] });
      expect(await sut.spent(c.key)).toBe(300);
      expect((await reserve('d', 50, [c])).ok).toBe(true);
    });

    it('settles once: a repeated settle changes nothing; a release settles at zero', async () => {
      const c = cap(pid('idem'), 10_000);
      await reserve('m', 500, [c]);
      const first = await store.settle({ member: 'm', nowMs: T, caps: [{ ...c, actualMicros: 321 }] });
      expect(first.spent).toEqual([321]);
      const again = await store.settle({ member: 'm', nowMs: T, caps: [{ ...c, actualMicros: 321 }] });
      expect(again.spent).toEqual([null]);
      await reserve('gone', 700, [c]);
      await store.settle({ member: 'gone', nowMs: T, caps: [{ ...c, actualMicros: 0 }] });
      expect(await sut.spent(c.key)).toBe(321);
    });

    it('counts an expired reservation as spent, and a late settle corrects it to the real cost', async () => {
      const c = cap(pid('exp'), 10_000);
      await reserve('killed', 800, [c], T, T + 1000);
      await reserve('late', 400, [c], T, T + 1000);
      // The next reservation after the deadline moves both into spent.
      expect((await reserve('next', 10, [c], T + 1001)).ok).toBe(true);
      expect(await sut.spent(c.key)).toBe(1200);
      await store.settle({ member: 'late', nowMs: T + 2000, caps: [{ ...c, actualMicros: 150 }] });
      expect(await sut.spent(c.key)).toBe(950);
      await store.settle({ member: 'late', nowMs: T + 2000, caps: [{ ...c, actualMicros: 150 }] });
      expect(await sut.spent(c.key)).toBe(950);
    });

    it('reserves against every cap or none', async () => {
      const p = pid('multi');
      const roomy = cap(p, 10_000, 'roomy');
      const full = cap(p, 100, 'full');
      await reserve('x', 100, [full]);
      const res = await reserve('y', 50, [roomy, full]);
      expect(res).toMatchObject({ ok: false, kind: 'cap', index: 1 });
      await store.settle({ member: 'y', nowMs: T, caps: [{ ...roomy, actualMicros: 50 }] });
      expect(await sut.spent(roomy.key)).toBe(0);
    });

    it('extends a held reservation when the same member reserves again', async () => {
      const c = cap(pid('extend'), 900);
      await reserve('s', 400, [c]);
      await reserve('s', 400, [c]);
      expect(await reserve('t', 150, [c])).toMatchObject({ ok: true }); // 800 held < 900
      expect(await reserve('u', 1, [c])).toMatchObject({ ok: false, reservedMicros: 950 });
      await store.settle({ member: 's', nowMs: T, caps: [{ ...c, actualMicros: 700 }] });
      expect(await sut.spent(c.key)).toBe(700);
    });

    it('reports 80, 90 and 100 % once each per cap key', async () => {
      const c = cap(pid('thr'), 1000);
      const levels: number[] = [];
      for (const [m, actual] of [
        ['a', 500],
        ['b', 310],
        ['c', 20],
        ['d', 100],
        ['e', 100],
      ] as const) {
        await reserve(m, 1, [c]);
        const s = await store.settle({ member: m, nowMs: T, caps: [{ ...c, actualMicros: actual }] });
        levels.push(...s.crossings.map((x) => x.level));
      }
      // 810 → 80; 830 → nothing new; 930 → 90; 1030 → 100.
      expect(levels).toEqual([80, 90, 100]);
      // A jump from nothing past all three reports each.
      const jump = cap(pid('jump'), 1000);
      await reserve('j', 1, [jump]);
      const s = await store.settle({ member: 'j', nowMs: T, caps: [{ ...jump, actualMicros: 5000 }] });
      expect(s.crossings.map((x) => [x.level, x.spentMicros])).toEqual([
        [80, 5000],
        [90, 5000],
        [100, 5000],
      ]);
    });

    it('GCRA: a burst passes, the next is refused with the delay, and passes after it', async () => {
      const p = pid('gcra');
      const r = rate(p, 5, 3); // one every 200 ms, 3 at once
      const go = () =>
        store.reserve({ member: 'r', amountMicros: 0, deadlineMs: T, nowMs: T, rates: [r], caps: [] });
      const first = await go();
      expect(first).toMatchObject({ ok: true });
      if (first.ok) expect(first.rates[0]!.remaining).toBe(2);
      await go();
      await go();
      const refused = await go();
      expect(refused).toMatchObject({ ok: false, kind: 'rate', index: 0 });
      if (!refused.ok && refused.kind === 'rate') {
        expect(refused.retryMs).toBeGreaterThan(100);
        expect(refused.retryMs).toBeLessThanOrEqual(200);
        expect(refused.rates[0]!.remaining).toBe(0);
        await new Promise((r) => setTimeout(r, refused.retryMs + 20));
      }
      expect(await go()).toMatchObject({ ok: true });
    });

    it('GCRA: takes from every limit or from none, and a cap refusal comes after the limits', async () => {
      const p = pid('all');
      const wide = rate(p, 100, 100, 'wide');
      const narrow = rate(p, 1, 1, 'narrow');
      const both = () =>
        store.reserve({
          member: 'q',
          amountMicros: 0,
          deadlineMs: T,
          nowMs: T,
          rates: [wide, narrow],
          caps: [],
        });
      expect((await both()).ok).toBe(true);
      const refused = await both();
      expect(refused).toMatchObject({ ok: false, kind: 'rate', index: 1 });
      if (!refused.ok && refused.kind === 'rate') expect(refused.rates[0]!.remaining).toBe(99);
    });

    it('GCRA tokens: a correction gives back what the estimate over-took', async () => {
      const p = pid('tok');
      const t = rate(p, 1, 100, 'tpm', 80); // 100 tokens at once, refilled at 1 a second
      const take = (cost: number) =>
        store.reserve({
          member: 'k',
          amountMicros: 0,
          deadlineMs: T,
          nowMs: T,
          rates: [{ ...t, cost }],
          caps: [],
        });
      expect((await take(80)).ok).toBe(true);
      expect((await take(80)).ok).toBe(false);
      // The answer used 10, not 80.
      await store.settle({ member: 'k', nowMs: T, caps: [], corrections: [{ rate: t, deltaUnits: -70 }] });
      expect((await take(80)).ok).toBe(true);
    });

    it('settles several caps at their own real costs and corrects token limits in one step', async () => {
      const p = pid('one-step');
      const slot = cap(p, 10_000, 'slot');
      const project = cap(p, 10_000, 'project');
      const t = rate(p, 1000, 100, 'tokens', 90);
      const r = await store.reserve({
        member: 'q',
        amountMicros: 500,
        deadlineMs: T + 60_000,
        nowMs: T,
        rates: [t],
        caps: [slot, project],
      });
      expect(r.ok).toBe(true);
      const s = await store.settle({
        member: 'q',
        nowMs: T,
        caps: [
          { ...slot, actualMicros: 120 },
          { ...project, actualMicros: 340 },
        ],
        corrections: [{ rate: t, deltaUnits: -80 }],
      });
      expect(s.spent).toEqual([120, 340]);
      // 90 taken, 80 given back: 90 of the burst of 100 is free again.
      const again = await store.reserve({
        member: 'q2',
        amountMicros: 0,
        deadlineMs: T,
        nowMs: T,
        rates: [{ ...t, cost: 90 }],
        caps: [],
      });
      expect(again.ok).toBe(true);
      // Settled once: the second settle changes nothing.
      const twice = await store.settle({ member: 'q', nowMs: T, caps: [{ ...slot, actualMicros: 999 }] });
      expect(twice.spent).toEqual([null]);
    });
  });
}
