import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { capFinished, capReported, capUnsent, rateCorrected, rateUnsent } from '#gateway/spend/lease-returns';
import type { CapAmounts } from '#gateway/spend/lease-types';

const capLease = (over: Partial<CapAmounts> = {}): CapAmounts => ({
  granted: 0,
  inflight: 0,
  used: 0,
  committed: 0,
  lastNeed: 0,
  ceiling: Number.POSITIVE_INFINITY,
  tight: false,
  ...over,
});

describe('what a finished request leaves on its cap lease', () => {
  it('its estimate stops running and its real cost counts as used', () => {
    const l = capLease({ granted: 1_000, inflight: 300, used: 50 });
    expect(capFinished(l, 100, 40)).toEqual({ inflight: 200, used: 90 });
  });

  it('a request that spent nothing gives its whole estimate back', () => {
    expect(capFinished(capLease({ inflight: 100 }), 100, 0)).toEqual({ inflight: 0, used: 0 });
  });

  it('a request that cost more than its estimate counts what it cost', () => {
    expect(capFinished(capLease({ granted: 100, inflight: 100 }), 100, 130)).toEqual({
      inflight: 0,
      used: 130,
    });
  });
});

describe('a report under way, and its rollback when the call fails', () => {
  it('what is reported leaves the lease at once, as the store takes it out of the lease', () => {
    expect(capReported(capLease({ granted: 1_000, used: 300 }), 300)).toEqual({ used: 0, granted: 700 });
    // Used beyond the lease: the lease is empty, not negative.
    expect(capReported(capLease({ granted: 100, used: 150 }), 150)).toEqual({ used: 0, granted: 0 });
  });

  it('a failed call puts a partially used lease back as it was, owing the report again', () => {
    const before = capLease({ granted: 1_000, inflight: 200, used: 300, committed: 600, ceiling: 200 });
    const sent = { ...before, ...capReported(before, 300) };
    // A request ends while the call is under way.
    const during = { ...sent, ...capFinished(sent, 100, 60) };
    const after = { ...during, ...capUnsent(during, 300) };
    expect(after).toEqual({
      ...before,
      inflight: 100,
      used: 300 + 60,
      // The store may count the old commitment or the one sent: nothing is assumed.
      committed: 0,
      // No shrink is under way any more.
      ceiling: Number.POSITIVE_INFINITY,
    });
  });

  it('a report larger than the lease rolls back to a lease holding at least the report', () => {
    const before = capLease({ granted: 100, used: 150 });
    const after = { ...before, ...capReported(before, 150) };
    expect({ ...after, ...capUnsent(after, 150) }).toMatchObject({ granted: 150, used: 150 });
  });

  it('report then rollback leaves what was used unchanged, and the lease at least as large', () => {
    const micros = fc.integer({ min: 0, max: 10_000_000 });
    fc.assert(
      fc.property(micros, micros, micros, (granted, used, finishedDuring) => {
        const before = capLease({ granted, used });
        const sent = { ...before, ...capReported(before, used) };
        const later = { ...sent, used: sent.used + finishedDuring };
        const after = { ...later, ...capUnsent(later, used) };
        expect(after.used).toBe(used + finishedDuring);
        expect(after.granted).toBe(Math.max(granted, used));
        expect(after.committed).toBe(0);
      }),
    );
  });
});

describe('rate units after a request and after a failed call', () => {
  it('units taken and not used come back to the lease; units used beyond it are owed', () => {
    // Took 200 (max_tokens), used 15.
    expect(rateCorrected(0, 15 - 200)).toBe(185);
    // Took 200, used 300, the lease held 50 more.
    expect(rateCorrected(50, 300 - 200)).toBe(-50);
  });

  it('units a failed call gave back, or a debt it paid, return to the lease', () => {
    expect(rateUnsent(10, 185)).toBe(195);
    expect(rateUnsent(0, -50)).toBe(-50);
  });
});
