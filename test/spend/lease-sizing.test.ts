import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { capFinished } from '#gateway/spend/lease-returns';
import {
  CAP_WANT_REQUESTS,
  type CallMode,
  COMMIT_AHEAD_REQUESTS,
  capCommitment,
  capEmpty,
  capFree,
  capHolds,
  capShrinks,
  nearCap,
  planCap,
  planRate,
  rateForgotten,
  rateGive,
  rateIdle,
  rateShort,
  rateWant,
  runsPastCommitment,
} from '#gateway/spend/lease-sizing';
import type { CapAmounts, RateLease } from '#gateway/spend/lease-types';
import { KEEP } from '#gateway/spend/store';

/** 600 requests a minute: one unit every 100 ms, a second's worth is 10. */
const PER_MINUTE_600 = { key: 'rl:p:600', intervalUs: 100_000, burst: 600 };

const capLease = (over: Partial<CapAmounts & { lastAdmitMs: number }> = {}) => ({
  granted: 0,
  inflight: 0,
  used: 0,
  committed: 0,
  lastNeed: 0,
  ceiling: Number.POSITIVE_INFINITY,
  tight: false,
  lastAdmitMs: 0,
  ...over,
});

const rateLease = (over: Partial<RateLease> = {}): RateLease => ({
  projectId: 'p',
  ref: PER_MINUTE_600,
  units: 0,
  releasing: false,
  remaining: 600,
  resetMs: 0,
  answeredAtMs: 0,
  lastAdmitMs: 0,
  ...over,
});

const TTL = 30_000;
const report = (nowMs: number, over: Partial<CallMode> = {}): CallMode => ({
  release: false,
  closed: false,
  nowMs,
  ttlMs: TTL,
  ...over,
});

describe('rate lease sizing', () => {
  it('a full rate lease is a second of the limit; a limit slower than one a second leases none ahead', () => {
    expect(rateWant(PER_MINUTE_600.intervalUs)).toBe(10);
    // 60 an hour: one unit a minute.
    expect(rateWant(60_000_000)).toBe(0);
  });

  it('a waiting request asks for a full lease, and at least its own units', () => {
    expect(planRate(rateLease(), 3)).toEqual({ give: 0, need: 3, want: 10 });
    expect(planRate(rateLease(), 40)).toEqual({ give: 0, need: 40, want: 40 });
    expect(planRate({ ...rateLease(), ref: { ...PER_MINUTE_600, intervalUs: 60_000_000 } }, 1)).toEqual({
      give: 0,
      need: 1,
      want: 1,
    });
  });

  it('gives back what exceeds a full lease, everything while releasing, and pays what it owes', () => {
    expect(rateGive(rateLease({ units: 10 }))).toBe(0);
    expect(rateGive(rateLease({ units: 195 }))).toBe(185);
    expect(rateGive(rateLease({ units: 7, releasing: true }))).toBe(7);
    expect(rateGive(rateLease({ units: -4 }))).toBe(-4);
    expect(planRate(rateLease({ units: 10 }), 0)).toBeUndefined();
    expect(planRate(rateLease({ units: 195 }), 0)).toEqual({ give: 185, need: 0, want: 0 });
  });

  it('a lease being given back serves no request; one holding fewer units than asked is short', () => {
    expect(rateShort(rateLease({ units: 5 }), 5)).toBe(false);
    expect(rateShort(rateLease({ units: 4 }), 5)).toBe(true);
    expect(rateShort(rateLease({ units: 50, releasing: true }), 1)).toBe(true);
  });

  it('idle units go back after the idle time, and an empty lease idle past the TTL is forgotten', () => {
    const l = rateLease({ units: 3, lastAdmitMs: 1_000 });
    expect(rateIdle(l, 11_000, 10_000)).toBe(true);
    expect(rateIdle(l, 10_999, 10_000)).toBe(false);
    expect(rateIdle(rateLease({ units: 0, lastAdmitMs: 0 }), 1e9, 0)).toBe(false);
    expect(rateForgotten(rateLease({ units: 0, lastAdmitMs: 1_000 }), 1_000 + TTL + 1, TTL)).toBe(true);
    expect(rateForgotten(rateLease({ units: 0, lastAdmitMs: 1_000 }), 1_000 + TTL, TTL)).toBe(false);
    expect(rateForgotten(rateLease({ units: 1, lastAdmitMs: 0 }), 1e9, TTL)).toBe(false);
  });
});

describe('cap lease sizing', () => {
  it('what a request may take is what the lease holds beyond what runs and what was used', () => {
    expect(capFree(capLease({ granted: 1_000, inflight: 300, used: 200 }))).toBe(500);
    // Room near zero: one µUSD left serves a request of one µUSD and no more.
    expect(capFree(capLease({ granted: 1_000, inflight: 999 }))).toBe(1);
    // Requests that cost more than their estimate leave the lease overdrawn until the next call.
    expect(capFree(capLease({ granted: 100, used: 150 }))).toBe(-50);
  });

  it('while a call may shrink the lease, only the ceiling is free; near the cap nothing is', () => {
    expect(capFree(capLease({ granted: 1_000, inflight: 100, ceiling: 100 }))).toBe(0);
    expect(capFree(capLease({ granted: 1_000, tight: true }))).toBe(0);
  });

  it('near the cap is a grant of less than two requests beyond what runs', () => {
    expect(nearCap(1_000 + 199, 1_000, 100)).toBe(true);
    expect(nearCap(1_000 + 200, 1_000, 100)).toBe(false);
    // One request near the cap: the grant is that request alone.
    expect(nearCap(100, 0, 100)).toBe(true);
  });

  it('a waiting request asks for many requests of its size and commits exactly what runs', () => {
    const l = capLease({ granted: 1_000, inflight: 400, used: 100, lastNeed: 50 });
    expect(planCap(l, 120, report(0))).toEqual({
      committed: 400,
      want: 120 * CAP_WANT_REQUESTS,
      need: 120,
      shrink: false,
    });
  });

  it('a report keeps the lease and commits a few requests ahead, within what the lease holds', () => {
    const roomy = capLease({ granted: 10_000, inflight: 400, lastNeed: 50, lastAdmitMs: 0 });
    expect(planCap(roomy, 0, report(0))).toEqual({
      committed: 400 + COMMIT_AHEAD_REQUESTS * 50,
      want: KEEP,
      need: 0,
      shrink: false,
    });
    // Room near zero: the commitment stops at what the lease holds beyond what was used.
    const full = capLease({ granted: 1_000, inflight: 400, used: 500, lastNeed: 50 });
    expect(planCap(full, 0, report(0))?.committed).toBe(500);
    // Never below what runs, even when it ran past the lease.
    const over = capLease({ granted: 300, inflight: 400, used: 100, lastNeed: 50 });
    expect(planCap(over, 0, report(0))?.committed).toBe(400);
  });

  it('near the cap, or closing, nothing is committed ahead', () => {
    const l = capLease({ granted: 10_000, inflight: 400, lastNeed: 50 });
    expect(planCap({ ...l, tight: true }, 0, report(0))?.committed).toBe(400);
    expect(planCap(l, 0, report(0, { release: true, closed: true }))).toEqual({
      committed: 400,
      want: 0,
      need: 0,
      shrink: true,
    });
  });

  it('an idle lease shrinks to what runs after a third of the TTL; a busy one is kept', () => {
    const l = capLease({ granted: 10_000, inflight: 0, lastNeed: 50, lastAdmitMs: 1_000 });
    const at = (nowMs: number) => planCap(l, 0, report(nowMs, { release: true }));
    expect(at(1_000 + TTL / 3 + 1)).toEqual({ committed: 0, want: 0, need: 0, shrink: true });
    expect(at(1_000 + TTL / 3)?.shrink).toBe(false);
    expect(capShrinks(0, 0, report(1e9))).toBe(false);
    // A request waiting on it: it grows instead.
    expect(capShrinks(0, 10, report(1e9, { release: true }))).toBe(false);
  });

  it('a lease that holds nothing and has nothing to report stays out of the call', () => {
    expect(planCap(capLease(), 0, report(0))).toBeUndefined();
    expect(planCap(capLease({ used: 5 }), 0, report(0))).toMatchObject({ committed: 0, want: KEEP });
    expect(planCap(capLease(), 10, report(0))).toMatchObject({ need: 10 });
    expect(capEmpty(capLease())).toBe(true);
    expect(capEmpty(capLease({ used: 1 }))).toBe(false);
    expect(capHolds(capLease({ granted: 10, inflight: 10 }))).toBe(true);
    expect(capHolds(capLease({ granted: 10, inflight: 0 }))).toBe(true);
    expect(capHolds(capLease({ granted: 0, inflight: 0, used: 7 }))).toBe(false);
  });

  it('what runs past the commitment is noticed', () => {
    expect(runsPastCommitment(capLease({ inflight: 300, used: 100, committed: 400 }))).toBe(false);
    expect(runsPastCommitment(capLease({ inflight: 301, used: 100, committed: 400 }))).toBe(true);
  });

  const micros = fc.integer({ min: 0, max: 1_000_000 });

  it('a commitment lies between what runs and what the lease holds beyond what was used', () => {
    fc.assert(
      fc.property(micros, micros, micros, micros, (granted, inflight, used, ahead) => {
        const l = capLease({ granted, inflight, used });
        const c = capCommitment(l, ahead);
        expect(c).toBeGreaterThanOrEqual(inflight);
        expect(c).toBeLessThanOrEqual(Math.max(inflight, granted - used));
        expect(c).toBeLessThanOrEqual(inflight + ahead);
        if (ahead === 0) expect(c).toBe(inflight);
      }),
    );
  });

  it('requests admitted within what is free never run past what the lease holds', () => {
    const event = fc.oneof(
      fc.record({ admit: fc.integer({ min: 1, max: 5_000 }) }),
      fc.record({ finish: fc.nat(), share: fc.double({ min: 0, max: 1, noNaN: true }) }),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 50_000 }),
        fc.array(event, { maxLength: 200 }),
        (granted, events) => {
          let l = capLease({ granted });
          const running: number[] = [];
          for (const e of events) {
            if ('admit' in e) {
              if (capFree(l) < e.admit) continue;
              l = { ...l, inflight: l.inflight + e.admit };
              running.push(e.admit);
            } else if (running.length) {
              const [estimate] = running.splice(e.finish % running.length, 1) as [number];
              // Costs within their estimates: what a request holds is its worst case.
              l = { ...l, ...capFinished(l, estimate, Math.floor(estimate * e.share)) };
            }
            expect(l.inflight + l.used).toBeLessThanOrEqual(l.granted);
            expect(capFree(l)).toBeGreaterThanOrEqual(0);
          }
        },
      ),
    );
  });
});
