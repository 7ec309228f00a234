/**
 * The state behind rate limits and spend caps: one contract, two adapters (memory-store.ts for
 * embedded mode, redis-store.ts on the shared client), one contract suite (test/spend).
 */

/** One GCRA limit: `limit` units per `periodMs`, at most `burst` at once. */
export interface RateRef {
  /** The TAT key (hash-tagged by project). */
  key: string;
  /** Emission interval in µs: periodMs * 1000 / limit. */
  intervalUs: number;
  burst: number;
  /** Units this request takes (1 for requests, estimated tokens for tokens), at most `burst`. */
  cost: number;
}

/** One spend cap in its current period. */
export interface CapRef {
  /** The spent counter (SPEND_KEYS); the reservation keys are derived from it. */
  key: string;
  limitMicros: number;
  /**
   * Seconds the period's keys are kept: until the period ends plus a day, by the caller's clock
   * (relative, so a clock that is not Redis's still keeps keys for the right time).
   */
  ttlSec: number;
}

export interface RateState {
  remaining: number;
  /** Until the limit is full again. */
  resetMs: number;
}

/** A cap reaching 80, 90 or 100 % of its limit for the first time this period. */
export interface Crossing {
  /** Index into the request's `caps`. */
  index: number;
  level: 80 | 90 | 100;
  spentMicros: number;
}

export interface ReserveInput {
  /** Request id plus scope (`project`, `primary`, `backup-1`): what settle names again. */
  member: string;
  amountMicros: number;
  deadlineMs: number;
  nowMs: number;
  rates: readonly RateRef[];
  caps: readonly CapRef[];
}

export type ReserveResult =
  | { ok: true; rates: RateState[]; crossings: Crossing[] }
  | { ok: false; kind: 'rate'; index: number; retryMs: number; rates: RateState[] }
  | {
      ok: false;
      kind: 'cap';
      index: number;
      spentMicros: number;
      reservedMicros: number;
      crossings: Crossing[];
    };

export interface SettleInput {
  member: string;
  actualMicros: number;
  nowMs: number;
  caps: readonly CapRef[];
}

export interface Settled {
  /** Spent µUSD of each cap after the settle; null for a cap where `member` held nothing. */
  spent: (number | null)[];
  crossings: Crossing[];
}

export interface GuardStore {
  /**
   * Checks every rate limit and every cap and, only if all pass, takes the rate units and reserves
   * `amountMicros` against every cap (adding to what `member` already holds: a stream's extension).
   * One atomic step; expired reservations are counted as spent first.
   */
  reserve(input: ReserveInput): Promise<ReserveResult>;
  /** Replaces `member`'s reservation with its real cost; a second settle changes nothing. */
  settle(input: SettleInput): Promise<Settled>;
  /** Corrects a token limit by `deltaUnits` (real minus estimated). Fire and forget. */
  correct(rate: RateRef, deltaUnits: number): void;
}

const LEVELS = [100, 90, 80] as const;

/** The threshold `spent` has reached, if any. Integer arithmetic, as in the Lua script. */
export function levelOf(spent: number, limit: number): 0 | 80 | 90 | 100 {
  for (const l of LEVELS) if (l === 100 ? spent >= limit : spent * 10 >= (limit * l) / 10) return l;
  return 0;
}
