/**
 * What the store grants a pod's lease call, as arithmetic: how big a slice of a limit's or a cap's
 * room a lease gets, what an expired lease counts as spent, and how a later report is absorbed by
 * it. The embedded store (memory-store.ts) runs these; the Lua script (scripts.ts) does the same
 * steps in Redis. No I/O, and the time is passed in.
 */
import type { CapOp, RateGrant, RateOp } from './store.ts';

/**
 * One rate op against a GCRA limit whose theoretical arrival time is `tatUs` (0: none). Units given
 * back move the TAT back; then a `need` is taken whole or refused (with the delay until it would
 * pass), and more up to `want` while a quarter of what is left allows: as the limit empties, each
 * grant is a smaller slice of it. Answers the grant and the TAT to store.
 */
export function rateGrant(op: RateOp, tatUs: number, nowUs: number): RateGrant & { tatUs: number } {
  const T = op.rate.intervalUs;
  let tat = Math.max(tatUs, nowUs);
  tat = Math.max(nowUs, tat - op.give * T);
  const avail = Math.floor((nowUs - tat + T * op.rate.burst) / T);
  let granted = 0;
  let retryMs = 0;
  if (op.need > 0) {
    if (avail >= op.need)
      granted = Math.min(avail, Math.max(op.need, Math.min(op.want, Math.floor(avail / 4))));
    else retryMs = Math.ceil((tat + op.need * T - T * op.rate.burst - nowUs) / 1000);
  }
  tat += granted * T;
  return {
    granted,
    remaining: Math.max(0, avail - granted),
    resetMs: Math.ceil((tat - nowUs) / 1000),
    retryMs,
    tatUs: tat,
  };
}

/** A cap as one member's call finds it, once what it reported is counted. */
export interface CapRoom {
  limitMicros: number;
  spent: number;
  /** Every other member's lease together. */
  others: number;
  /** Members holding a lease, this one included. */
  holders: number;
  /** This member's lease after its report. */
  held: number;
}

/**
 * The lease a member holds after one cap op. What its requests in flight commit is always kept.
 * A report (`want` KEEP) leaves the lease as it is; otherwise it becomes `committed` plus up to
 * `want`, at most a 1/(2 × holders) share of the room left: slices shrink as the room does, and no
 * member takes all of it. A `need` is granted while the room left is above zero, at least the need
 * whole, so the leases and spent together pass the limit by less than one request's need, and once
 * they have, every further need is refused.
 */
export function capGrant(
  op: Pick<CapOp, 'committed' | 'want' | 'need'>,
  room: CapRoom,
): { held: number; refused: boolean } {
  const free = room.limitMicros - room.spent - room.others - op.committed;
  const share = Math.max(0, Math.floor(free / (2 * room.holders)));
  if (op.need > 0) {
    if (free > 0) return { held: op.committed + Math.max(op.need, Math.min(op.want, share)), refused: false };
    return { held: op.committed, refused: true };
  }
  if (op.want >= 0) return { held: op.committed + Math.min(op.want, share), refused: false };
  return { held: Math.max(room.held, op.committed), refused: false };
}

/**
 * A lease past its deadline (its pod is gone): what it had committed to requests in flight counts as
 * spent (money that may have been spent), never more than it held; the rest returns to the cap.
 */
export function expiredLease(amount: number, committed: number): { counted: number; returned: number } {
  const counted = Math.min(amount, committed);
  return { counted, returned: amount - counted };
}

/**
 * `used` µUSD reported by a member whose earlier lease expired: what the expiry counted as spent
 * (`prepaid`) absorbs it first, so a request is counted once; the rest is spent now.
 */
export function absorbUsed(used: number, prepaid: number): { spent: number; prepaidLeft: number } {
  const absorbed = Math.min(used, prepaid);
  return { spent: used - absorbed, prepaidLeft: prepaid - absorbed };
}

/** A member's lease after reporting `used`: what finished requests cost leaves it. */
export const heldAfterUse = (held: number, used: number): number => Math.max(0, held - used);
