/**
 * The state behind rate limits and spend caps: one contract, two adapters (memory-store.ts for
 * embedded mode, redis-store.ts on the shared client), one contract suite (test/spend).
 *
 * Each gateway pod holds a lease on every limit and cap its requests touch (leases.ts): units of a
 * rate limit and micro-USD of a cap taken ahead of time, so a request is admitted against the pod's
 * own lease, without a round trip. The store only ever sees lease calls.
 */

/** One GCRA limit: `burst` units at once, then one every `intervalUs`. */
export interface RateRef {
  /** The TAT key (hash-tagged by project). */
  key: string;
  /** Emission interval in µs: periodMs * 1000 / limit. */
  intervalUs: number;
  burst: number;
}

/** One spend cap in its current period. */
export interface CapRef {
  /** The spent counter (SPEND_KEYS); the lease keys are derived from it. */
  key: string;
  limitMicros: number;
  /**
   * Seconds the period's keys are kept: until the period ends plus a day, by the caller's clock
   * (relative, so a clock that is not Redis's still keeps keys for the right time).
   */
  ttlSec: number;
}

export interface RateOp {
  rate: RateRef;
  /** Units given back (negative: used beyond the lease, taken now). */
  give: number;
  /** Units wanted in all (a hint; the store grants less when little is left). */
  want: number;
  /** Units a waiting request needs: at least this many are taken, or none. 0: none asked for. */
  need: number;
}

/** `want` of a cap op that keeps the lease as it is (a report). */
export const KEEP = -1;

export interface CapOp {
  cap: CapRef;
  /** µUSD that finished requests cost since the last call: moved from the lease to spent. */
  used: number;
  /** µUSD the pod's requests in flight hold now: what counts as spent if the pod dies. */
  committed: number;
  /** The lease beyond `committed` the pod would like (a hint), or KEEP. */
  want: number;
  /** µUSD one waiting request needs on top of `committed`. 0: none asked for. */
  need: number;
}

export interface LeaseInput {
  /** The pod: one lease per pod on each limit and cap. */
  member: string;
  nowMs: number;
  /** When the pod's leases count as abandoned if it has not called again. */
  deadlineMs: number;
  rates: readonly RateOp[];
  caps: readonly CapOp[];
}

export interface RateGrant {
  granted: number;
  /** Units the limit has left for everybody after this call. */
  remaining: number;
  /** Until the limit is full again. */
  resetMs: number;
  /** A refused `need`: when it would pass. */
  retryMs: number;
}

export interface CapGrant {
  /** The lease now (µUSD, including what is committed). */
  held: number;
  spent: number;
  /** Every pod's leases together. */
  leased: number;
  /** The `need` was refused: the cap is reached. */
  refused: boolean;
}

/** A cap reaching 80, 90 or 100 % of its limit for the first time this period. */
export interface Crossing {
  /** Index into the call's `caps`. */
  index: number;
  level: 80 | 90 | 100;
  spentMicros: number;
}

export interface LeaseResult {
  rates: RateGrant[];
  caps: CapGrant[];
  crossings: Crossing[];
}

/** A cap's counters as they are, read without a lease call (the console's view). */
export interface CapPeek {
  /** µUSD settled (and counted from expired leases) this period. */
  spent: number;
  /** µUSD every pod's leases hold, not yet spent. */
  leased: number;
  /** Pods holding a lease. */
  holders: number;
  /** The highest threshold announced this period (0, 80, 90, 100). */
  level: number;
}

export interface GuardStore {
  /** Reports and resizes one pod's leases on some limits and caps of one project, atomically. */
  lease(input: LeaseInput): Promise<LeaseResult>;
  /** Reads caps' counters without changing them (no lease is taken, none expired). */
  peek(caps: readonly CapRef[]): Promise<CapPeek[]>;
  /** False while the store is known to be unreachable (then admission follows the outage policy). */
  reachable(): boolean;
}

const LEVELS = [100, 90, 80] as const;

/** The threshold `spent` has reached, if any. Integer arithmetic, as in the Lua script. */
export function levelOf(spent: number, limit: number): 0 | 80 | 90 | 100 {
  for (const l of LEVELS) if (l === 100 ? spent >= limit : spent * 10 >= (limit * l) / 10) return l;
  return 0;
}
