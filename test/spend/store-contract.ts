import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CapOp,
  type CapRef,
  type GuardStore,
  KEEP,
  type RateOp,
  type RateRef,
} from '#gateway/spend/store';

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
const rate = (project: string, perSecond: number, burst: number, name = 'r'): RateRef => ({
  key: `switchyard:{p:${project}}:rl:${name}`,
  intervalUs: 1_000_000 / perSecond,
  burst,
});
const T = 1_000_000_000_000;

/** A cap op: report `used`, commit `committed`, ask for one request of `need` (want: 32 of them). */
const op = (c: CapRef, o: Partial<Omit<CapOp, 'cap'>> = {}): CapOp => ({
  cap: c,
  used: 0,
  committed: 0,
  need: 0,
  want: (o.need ?? 0) * 32,
  ...o,
});
const rop = (r: RateRef, o: Partial<Omit<RateOp, 'rate'>> = {}): RateOp => ({
  rate: r,
  give: 0,
  need: 0,
  want: o.need ?? 0,
  ...o,
});

/**
 * The rules of rate limits and spend caps, the same on every backend (memory, Redis, Redis
 * Cluster): a pod's lease calls. Spend uses the caller's clock (passed in); rate limits use the
 * store's (Redis TIME), so the rate cases use small real intervals.
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

    const lease = (member: string, caps: CapOp[], rates: RateOp[] = [], nowMs = T, deadlineMs = T + 60_000) =>
      store.lease({ member, nowMs, deadlineMs, rates, caps });

    it('grants one request at least, more while the room allows, shared by the pods that hold leases', async () => {
      const c = cap(pid('grant'), 1_000);
      const a = await lease('pod-a', [op(c, { need: 10 })]);
      // 1000 free, one holder: half of it, up to 32 requests' worth.
      expect(a.caps[0]).toEqual({ held: 320, spent: 0, leased: 320, refused: false });
      const b = await lease('pod-b', [op(c, { need: 10, want: 10_000 })]);
      // 680 free, two holders: a quarter each.
      expect(b.caps[0]).toMatchObject({ held: 170, leased: 490, refused: false });
    });

    it('peek reads spent, leased, holders and the threshold reached, and changes nothing', async () => {
      const c = cap(pid('peek'), 1_000);
      expect(await store.peek([c])).toEqual([{ spent: 0, leased: 0, holders: 0, level: 0 }]);
      await lease('pod-a', [op(c, { need: 10 })]);
      const a = await lease('pod-a', [op(c, { used: 850, committed: 0, want: 0 })]);
      await lease('pod-b', [op(c, { need: 10, want: 10 })]);
      const [seen] = await store.peek([c]);
      expect(seen).toEqual({ spent: 850, leased: 10, holders: 1, level: 80 });
      expect(a.crossings.map((x) => x.level)).toEqual([80]);
      expect(await store.peek([c])).toEqual([seen]);
    });

    it('moves what was used from the lease to spent, keeps or resizes the rest', async () => {
      const c = cap(pid('report'), 10_000);
      await lease('pod', [op(c, { need: 100 })]);
      const kept = await lease('pod', [op(c, { used: 40, committed: 100, want: KEEP })]);
      expect(kept.caps[0]).toMatchObject({ held: 3_200 - 40, spent: 40 });
      expect(await sut.spent(c.key)).toBe(40);
      const shrunk = await lease('pod', [op(c, { used: 60, committed: 0, want: 0 })]);
      expect(shrunk.caps[0]).toEqual({ held: 0, spent: 100, leased: 0, refused: false });
    });

    it('near the cap grants one request while anything is left, then refuses with the spent amount', async () => {
      const c = cap(pid('near'), 100);
      const first = await lease('pod-a', [op(c, { need: 60, want: 60 })]);
      expect(first.caps[0]).toMatchObject({ held: 60, refused: false });
      // 40 left: one more request of 60 is still granted (it may overshoot by less than itself) ...
      const second = await lease('pod-b', [op(c, { need: 60, want: 60 })]);
      expect(second.caps[0]).toMatchObject({ held: 60, leased: 120, refused: false });
      // ... and then nothing more, for anyone.
      const third = await lease('pod-c', [op(c, { need: 1 })]);
      expect(third.caps[0]).toMatchObject({ held: 0, refused: true, spent: 0 });
      const again = await lease('pod-a', [op(c, { used: 60, committed: 0, need: 1 })]);
      expect(again.caps[0]).toMatchObject({ held: 0, spent: 60, refused: true });
    });

    it('a lease past its deadline counts what it committed as spent and gives the rest back', async () => {
      const c = cap(pid('expire'), 10_000);
      await lease('killed', [op(c, { need: 50 })], [], T, T + 1_000);
      await lease('killed', [op(c, { committed: 150, want: KEEP })], [], T, T + 1_000);
      const other = await lease('alive', [op(c, { need: 10 })], [], T + 2_000, T + 62_000);
      // The killed pod's lease (1600) is gone; its 150 committed count as spent.
      expect(other.caps[0]!.spent).toBe(150);
      expect(other.caps[0]!.leased).toBe(other.caps[0]!.held);
      expect(await sut.spent(c.key)).toBe(150);
    });

    it('a pod whose lease expired while it lived: its later report is absorbed by what was counted', async () => {
      const c = cap(pid('late'), 10_000);
      await lease('slow', [op(c, { need: 50, committed: 0 })], [], T, T + 1_000);
      await lease('slow', [op(c, { committed: 50, want: KEEP })], [], T, T + 1_000);
      await lease('other', [op(c, { need: 1 })], [], T + 5_000, T + 65_000); // expires it: 50 counted
      const late = await lease(
        'slow',
        [op(c, { used: 30, committed: 0, want: 0 })],
        [],
        T + 6_000,
        T + 66_000,
      );
      // The 30 it really cost were already among the 50 counted: spent stays 50 (the safe side).
      expect(late.caps[0]!.spent).toBe(50);
      const next = await lease(
        'slow',
        [op(c, { used: 30, committed: 0, want: 0 })],
        [],
        T + 7_000,
        T + 67_000,
      );
      // 20 were left counted in advance; 10 more are new.
      expect(next.caps[0]!.spent).toBe(60);
    });

    it('reports 80, 90 and 100 % once each per cap key', async () => {
      const c = cap(pid('levels'), 1_000);
      await lease('pod', [op(c, { need: 1000, want: 1000 })]);
      const a = await lease('pod', [op(c, { used: 850, committed: 0, want: KEEP })]);
      expect(a.crossings).toEqual([{ index: 0, level: 80, spentMicros: 850 }]);
      const b = await lease('pod', [op(c, { used: 200, committed: 0, want: KEEP })]);
      expect(b.crossings).toEqual([
        { index: 0, level: 90, spentMicros: 1_050 },
        { index: 0, level: 100, spentMicros: 1_050 },
      ]);
      const again = await lease('pod', [op(c, { used: 1, committed: 0, want: KEEP })]);
      expect(again.crossings).toEqual([]);
    });

    it('several caps in one call, each on its own terms', async () => {
      const p = pid('multi');
      const roomy = cap(p, 1_000_000, 'roomy');
      const full = cap(p, 10, 'full');
      await lease('pod', [op(full, { need: 10, want: 10 })]);
      await lease('pod', [op(full, { used: 10, want: 0 })]);
      const r = await lease('pod', [op(roomy, { need: 5 }), op(full, { need: 5 })]);
      expect(r.caps[0]).toMatchObject({ refused: false, held: 160 });
      expect(r.caps[1]).toMatchObject({ refused: true, held: 0, spent: 10 });
    });

    it('GCRA: a lease takes at least what is needed, up to a quarter of what is left; the rest is refused with the delay', async () => {
      const r = rate(pid('gcra'), 1, 8);
      const first = await lease('pod', [], [rop(r, { need: 1, want: 100 })]);
      // 8 available: a quarter (2), at least 1.
      expect(first.rates[0]).toMatchObject({ granted: 2, remaining: 6, retryMs: 0 });
      const big = await lease('pod', [], [rop(r, { need: 6, want: 6 })]);
      expect(big.rates[0]).toMatchObject({ granted: 6, remaining: 0 });
      const refused = await lease('pod', [], [rop(r, { need: 1 })]);
      expect(refused.rates[0]!.granted).toBe(0);
      expect(refused.rates[0]!.retryMs).toBeGreaterThan(0);
      expect(refused.rates[0]!.retryMs).toBeLessThanOrEqual(1_000);
    });

    it('GCRA: units given back can be taken again at once; a debt is taken from what is left', async () => {
      const r = rate(pid('give'), 1, 4);
      await lease('pod', [], [rop(r, { need: 4, want: 4 })]);
      const back = await lease('pod', [], [rop(r, { give: 3, need: 3, want: 3 })]);
      expect(back.rates[0]).toMatchObject({ granted: 3, remaining: 0 });
      const r2 = rate(pid('debt'), 1, 4);
      const owed = await lease('pod', [], [rop(r2, { give: -3, need: 1, want: 1 })]);
      expect(owed.rates[0]).toMatchObject({ granted: 1, remaining: 0 });
    });
  });
}
