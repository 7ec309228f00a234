import type { Logger } from 'pino';
import type { CapRule } from './rules.ts';
import type { GuardStore, LeaseResult, RateRef } from './store.ts';
import type { CapInPeriod } from './thresholds.ts';

/** What the pod's view of a cap lease is made of: µUSD amounts, no identity, no clock. */
export interface CapAmounts {
  /** µUSD the store holds for this pod (as of its last answer). */
  granted: number;
  /** Estimates of admitted requests still running: what counts as spent if the pod dies. */
  inflight: number;
  /** What finished requests cost, not yet reported. */
  used: number;
  /**
   * What the store counts as spent should this pod die: its requests in flight and what finished
   * unreported, plus room for a few more, so the next ones need no call. Never below what runs.
   */
  committed: number;
  /** The estimate of the last request admitted on it (the unit of the room committed ahead). */
  lastNeed: number;
  /** While a call that may shrink the lease is under way: the most it can be assumed to hold. */
  ceiling: number;
  /**
   * Near the cap the store grants one request at a time: then every request asks it (it alone can
   * tell whether the cap is reached), and what the lease holds beyond them serves nobody else.
   */
  tight: boolean;
}

/** A pod's lease on one cap: what the store holds for it, and what its requests do with it. */
export interface CapLease extends CapAmounts {
  readonly projectId: string;
  ref: CapInPeriod;
  rule: CapRule;
  lastAdmitMs: number;
  /** The last request that ended on it (named by the threshold events its report crosses). */
  lastRequestId?: string | undefined;
}

/** A pod's lease on one rate limit: units taken from the limit ahead of its requests. */
export interface RateLease {
  readonly projectId: string;
  ref: RateRef;
  /**
   * Units leased and not used (negative: used beyond the lease, owed to the limit). Units a request
   * took and did not use (a token estimate above the real count) come back here.
   */
  units: number;
  /** While units are being given back: none of them may be used. */
  releasing: boolean;
  /** What the limit had left for everybody, and its reset, at the last answer (for the headers). */
  remaining: number;
  resetMs: number;
  answeredAtMs: number;
  lastAdmitMs: number;
}

/** What a request asks of the leases: units of some limits, µUSD of some caps. */
export interface LeaseNeeds {
  rates: { lease: RateLease; units: number }[];
  caps: { lease: CapLease; micros: number }[];
}

export type Taken =
  | { ok: true }
  | { ok: false; kind: 'rate'; index: number; retryMs: number }
  | { ok: false; kind: 'cap'; index: number; spentMicros: number };

/** The store could not be reached for a lease call: admission follows the outage policy. */
export class LeasesUnavailableError extends Error {
  readonly code = 'LEASES_UNAVAILABLE';
  constructor(cause: unknown) {
    super(`spend and limit leases cannot be renewed: ${String(cause)}`, { cause });
    this.name = 'LeasesUnavailableError';
  }
}

export type LeaseCallKind = 'renewal' | 'report';

export interface LeasesOptions {
  store: GuardStore;
  /** This pod, as the store knows it (one lease per pod on each limit and cap). */
  member: string;
  now: () => number;
  logger: Logger;
  /** How long a lease outlives its pod's last call (then what it committed counts as spent). */
  ttlMs: number;
  /** The answer of every lease call, for reporting (crossings, spend gauges). */
  onAnswer?: (projectId: string, caps: readonly CapLease[], result: LeaseResult) => void;
  /**
   * Every call made to the store: `renewal` when a request waits for it, `report` when none does
   * (what finished requests cost, commitments, leases given back). For the lease-call counter.
   */
  onCall?: (kind: LeaseCallKind, ok: boolean) => void;
}
