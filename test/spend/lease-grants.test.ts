import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  absorbUsed,
  type CapRoom,
  capGrant,
  expiredLease,
  heldAfterUse,
  rateGrant,
} from '#gateway/spend/lease-grants';
import { KEEP, type RateOp } from '#gateway/spend/store';

/** 600 a minute: one unit every 100 ms, 600 at once. */
const T = 100_000;
const LIMIT = { key: 'rl:p:600', intervalUs: T, burst: 600 };
/** A wall-clock time in µs, as Redis TIME gives it. */
const NOW = 1_764_000_000_000 * 1000;
const rateOp = (over: Partial<RateOp>): RateOp => ({ rate: LIMIT, give: 0, want: 0, need: 0, ...over });

describe('rate grants', () => {
  it('a fresh limit grants what is wanted, within a quarter of what is left', () => {
    expect(rateGrant(rateOp({ need: 1, want: 10 }), 0, NOW)).toEqual({
      granted: 10,
      remaining: 590,
      resetMs: 1_000,
      retryMs: 0,
      tatUs: NOW + 10 * T,
    });
  });

  it('slices shrink as the limit empties, and never below the need while it fits', () => {
    let tat = 0;
    const slices: number[] = [];
    for (let i = 0; i < 5; i++) {
      const g = rateGrant(rateOp({ need: 1, want: 10_000 }), tat, NOW);
      slices.push(g.granted);
      tat = g.tatUs;
    }
    expect(slices).toEqual([150, 112, 84, 63, 47]);
    // Three left: a quarter is none, the need is granted whole.
    const nearlyEmpty = NOW + (600 - 3) * T;
    expect(rateGrant(rateOp({ need: 1, want: 10_000 }), nearlyEmpty, NOW).granted).toBe(1);
    expect(rateGrant(rateOp({ need: 3, want: 10_000 }), nearlyEmpty, NOW).granted).toBe(3);
  });

  it('a need the limit cannot serve is refused with the time until it would pass', () => {
    const nearlyEmpty = NOW + (600 - 3) * T;
    expect(rateGrant(rateOp({ need: 5, want: 10 }), nearlyEmpty, NOW)).toEqual({
      granted: 0,
      remaining: 3,
      resetMs: 59_700,
      retryMs: 200,
      tatUs: nearlyEmpty,
    });
  });

  it('units given back return to the limit; units owed are taken; an old TAT counts as now', () => {
    const after150 = NOW + 150 * T;
    expect(rateGrant(rateOp({ give: 150 }), after150, NOW)).toMatchObject({ remaining: 600, tatUs: NOW });
    expect(rateGrant(rateOp({ give: -20 }), 0, NOW)).toMatchObject({ remaining: 580, tatUs: NOW + 20 * T });
    // Giving back more than is outstanding returns nothing beyond a full limit.
    expect(rateGrant(rateOp({ give: 1_000 }), after150, NOW).remaining).toBe(600);
    expect(rateGrant(rateOp({ need: 1, want: 1 }), NOW - 3_600_000_000, NOW).remaining).toBe(599);
  });

  it('units taken and not given back never exceed the burst plus what the elapsed time allows', () => {
    const step = fc.record({
      dtUs: fc.integer({ min: 0, max: 5 * T }),
      consume: fc.double({ min: 0, max: 1, noNaN: true }),
      give: fc.double({ min: 0, max: 1, noNaN: true }),
      need: fc.integer({ min: 0, max: 700 }),
      want: fc.integer({ min: 0, max: 2_000 }),
    });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 100 }), (steps) => {
        let now = NOW;
        let tat = 0;
        let outstanding = 0;
        let consumed = 0;
        for (const s of steps) {
          now += s.dtUs;
          const used = Math.floor(outstanding * s.consume);
          consumed += used;
          outstanding -= used;
          const give = Math.floor(outstanding * s.give);
          const g = rateGrant(rateOp({ give, need: s.need, want: s.want }), tat, now);
          tat = g.tatUs;
          outstanding += g.granted - give;
          if (s.need > 0) expect(g.granted === 0 || g.granted >= s.need).toBe(true);
          expect(consumed + outstanding).toBeLessThanOrEqual(LIMIT.burst + (now - NOW) / T);
        }
      }),
    );
  });
});

/** One member alone on a $1 cap. */
const room = (over: Partial<CapRoom> = {}): CapRoom => ({
  limitMicros: 1_000_000,
  spent: 0,
  others: 0,
  holders: 1,
  held: 0,
  ...over,
});

describe('cap grants', () => {
  it('a lease gets what it wants within half the room left, shared among its holders', () => {
    expect(capGrant({ committed: 0, want: 25_600, need: 100 }, room())).toEqual({
      held: 25_600,
      refused: false,
    });
    expect(capGrant({ committed: 0, want: 900_000, need: 100 }, room())).toEqual({
      held: 500_000,
      refused: false,
    });
    expect(capGrant({ committed: 0, want: 900_000, need: 100 }, room({ holders: 4 }))).toEqual({
      held: 125_000,
      refused: false,
    });
    // What runs is kept, and the room is counted past it.
    expect(capGrant({ committed: 400_000, want: 900_000, need: 100 }, room())).toEqual({
      held: 400_000 + 300_000,
      refused: false,
    });
  });

  it('slices shrink as the room does', () => {
    const slice = (spent: number) => capGrant({ committed: 0, want: 1e9, need: 1 }, room({ spent })).held;
    expect([0, 500_000, 900_000, 990_000, 999_990].map(slice)).toEqual([500_000, 250_000, 50_000, 5_000, 5]);
  });

  it('one request near the cap is granted whole, and the next one is refused', () => {
    const near = room({ spent: 950_000, others: 0 });
    const first = capGrant({ committed: 0, want: 25_600, need: 100_000 }, near);
    expect(first).toEqual({ held: 100_000, refused: false });
    // Spent and leases pass the cap by less than that request's need.
    expect(near.spent + first.held - near.limitMicros).toBeLessThan(100_000);
    const second = capGrant(
      { committed: 0, want: 256, need: 1 },
      room({ spent: 950_000, others: first.held, holders: 2 }),
    );
    expect(second).toEqual({ held: 0, refused: true });
  });

  it('with no room left a need is refused and the lease keeps only what runs', () => {
    expect(capGrant({ committed: 300, want: 256, need: 1 }, room({ spent: 999_700, held: 5_000 }))).toEqual({
      held: 300,
      refused: true,
    });
  });

  it('a report keeps the lease; a lease given back goes down to what runs', () => {
    expect(capGrant({ committed: 300, want: KEEP, need: 0 }, room({ held: 5_000 }))).toEqual({
      held: 5_000,
      refused: false,
    });
    expect(capGrant({ committed: 6_000, want: KEEP, need: 0 }, room({ held: 5_000 }))).toEqual({
      held: 6_000,
      refused: false,
    });
    expect(capGrant({ committed: 300, want: 0, need: 0 }, room({ held: 5_000 }))).toEqual({
      held: 300,
      refused: false,
    });
  });

  it('an expired lease counts what it had committed as spent, never more than it held', () => {
    expect(expiredLease(8_738, 408)).toEqual({ counted: 408, returned: 8_330 });
    expect(expiredLease(300, 500)).toEqual({ counted: 300, returned: 0 });
    expect(expiredLease(0, 0)).toEqual({ counted: 0, returned: 0 });
  });

  it('a report after the expiry is absorbed by what the expiry counted, so nothing is counted twice', () => {
    expect(absorbUsed(100, 300)).toEqual({ spent: 0, prepaidLeft: 200 });
    expect(absorbUsed(500, 300)).toEqual({ spent: 200, prepaidLeft: 0 });
    expect(absorbUsed(50, 0)).toEqual({ spent: 50, prepaidLeft: 0 });
    expect(heldAfterUse(1_000, 300)).toBe(700);
    expect(heldAfterUse(100, 150)).toBe(0);
  });

  it('spent and every lease together pass the cap by less than the need of one request', () => {
    const call = fc.record({
      member: fc.integer({ min: 0, max: 3 }),
      expire: fc.boolean(),
      used: fc.double({ min: 0, max: 1, noNaN: true }),
      commit: fc.double({ min: 0, max: 1, noNaN: true }),
      need: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 50_000 })),
      want: fc.oneof(fc.constant(KEEP), fc.integer({ min: 0, max: 2_000_000 })),
    });
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000_000 }),
        fc.array(call, { maxLength: 60 }),
        (limit, calls) => {
          let spent = 0;
          const leases = new Map<number, { held: number; committed: number }>();
          const prepaid = new Map<number, number>();
          let largestNeed = 0;
          const total = () => spent + [...leases.values()].reduce((n, l) => n + l.held, 0);
          for (const c of calls) {
            const before = leases.get(c.member);
            if (c.expire) {
              if (!before) continue;
              const { counted } = expiredLease(before.held, before.committed);
              spent += counted;
              prepaid.set(c.member, (prepaid.get(c.member) ?? 0) + counted);
              leases.delete(c.member);
            } else {
              // Requests run within the lease (or, after an expiry, within what it had committed),
              // cost at most their estimate, and a pod commits within what it holds.
              let held = before?.held ?? 0;
              const used = Math.floor((before ? held : (prepaid.get(c.member) ?? 0)) * c.used);
              const absorbed = absorbUsed(used, prepaid.get(c.member) ?? 0);
              spent += absorbed.spent;
              prepaid.set(c.member, absorbed.prepaidLeft);
              held = heldAfterUse(held, used);
              const committed = Math.floor(held * c.commit);
              const others = total() - spent - (before?.held ?? 0);
              const holders = leases.size + (before ? 0 : 1);
              const g = capGrant(
                { committed, want: c.want, need: c.need },
                { limitMicros: limit, spent, others, holders, held },
              );
              leases.set(c.member, { held: g.held, committed });
              if (!g.refused) largestNeed = Math.max(largestNeed, c.need);
            }
            expect(total() - limit).toBeLessThanOrEqual(Math.max(0, largestNeed - 1));
          }
        },
      ),
    );
  });
});
