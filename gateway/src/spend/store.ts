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

/** A cap with the real cost that replaces `member`'s reservation on it. */
export type CapSettle = CapRef & { actualMicros: number };

/** A token limit moved by real minus estimated units, once the answer's usage is known. */
export interface RateCorrection {
  rate: RateRef;
  deltaUnits: number;
}

export interface SettleInput {
  member: string;
  nowMs: number;
  caps: readonly CapSettle[];
  /** Token-limit corrections of the same request, applied in the same step. */
  corrections?: readonly RateCorrection[];
}

export interface Settled {
  /** Spent µUSD of each cap (in `caps` order) after the settle; null where `member` held nothing. */
  spent: (number | null)[];
  crossings: Crossing[];
}

export interface GuardStore {
  /**
   * Checks every rate limit (one refusing: nothing is taken), takes their units, then checks every
   * cap and, only if all pass, reserves `amountMicros` against each (adding to what `member`
   * already holds: a stream's extension). One atomic step; expired reservations count as spent first.
   */
  reserve(input: ReserveInput): Promise<ReserveResult>;
  /**
   * Replaces `member`'s reservation on each cap with its real cost (a second settle changes
   * nothing) and applies the token-limit corrections: everything a finished request writes, in one
   * atomic step (one script call on Redis). A lost correction only leaves the estimate standing.
   */
  settle(input: SettleInput): Promise<Settled>;
}

const LEVELS = [100, 90, 80] as const;

/** The threshold `spent` has reached, if any. Integer arithmetic, as in the Lua script. */
export function levelOf(spent: number, limit: number): 0 | 80 | 90 | 100 {
  for (const l of LEVELS) if (l === 100 ? spent >= limit : spent * 10 >= (limit * l) / 10) return l;
  return 0;
}
