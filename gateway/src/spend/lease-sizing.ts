/**
 * How a pod sizes its leases (leases.ts): what a request may take without a call, what a call asks
 * the store for, what it commits ahead of the requests that run, and when a lease is given back.
 * Pure arithmetic on a lease's amounts: no I/O, and the time is passed in.
 */
import type { CapAmounts, RateLease } from './lease-types.ts';
import { KEEP } from './store.ts';

/** µUSD of caps a lease asks for, in requests' worth of the request that needs it. */
export const CAP_WANT_REQUESTS = 256;
/** Requests' worth a lease commits ahead of its requests, so a pod admits them without a call. */
export const COMMIT_AHEAD_REQUESTS = 8;
/** A rate lease asks for a second's worth of the limit (at least the request's units). */
export const RATE_WANT_MS = 1000;

/** The most units a rate lease keeps between calls: what it asks for when it runs short. */
export const rateWant = (intervalUs: number): number => Math.floor((1000 / intervalUs) * RATE_WANT_MS);

/**
 * Units a rate lease owes its limit (negative) or gives back to it: all of them while releasing,
 * otherwise what exceeds a full lease.
 */
export const rateGive = (l: Readonly<Pick<RateLease, 'units' | 'releasing' | 'ref'>>): number =>
  l.releasing || l.units < 0 ? l.units : Math.max(0, l.units - rateWant(l.ref.intervalUs));

/** A rate lease cannot serve `units` without a call: it is being given back, or holds fewer. */
export const rateShort = (l: Readonly<Pick<RateLease, 'units' | 'releasing'>>, units: number): boolean =>
  l.releasing || l.units < units;

/** µUSD of a cap lease a request may still take without calling the store (none near the cap). */
export const capFree = (l: Readonly<CapAmounts>): number =>
  l.tight ? 0 : Math.min(l.granted, l.ceiling) - l.inflight - l.used;

/** More runs on a cap lease than the store would count as spent should the pod die. */
export const runsPastCommitment = (l: Readonly<CapAmounts>): boolean => l.inflight + l.used > l.committed;

/**
 * A request's grant left less than two requests' worth beyond what runs: the store is near the cap,
 * and grants one request at a time from then on.
 */
export const nearCap = (held: number, inflight: number, need: number): boolean => held - inflight < 2 * need;

/** What one rate lease puts in a call, or undefined when it has nothing to say. */
export interface RatePlan {
  /** Units given back (negative: owed). */
  give: number;
  need: number;
  want: number;
}

/** A rate lease in a call: what it gives back, and for a waiting request (`need`), a full lease. */
export function planRate(
  l: Readonly<Pick<RateLease, 'units' | 'releasing' | 'ref'>>,
  need: number,
): RatePlan | undefined {
  const give = rateGive(l);
  if (!need && give === 0) return undefined;
  return { give, need, want: need ? Math.max(need, rateWant(l.ref.intervalUs)) : 0 };
}

/** The circumstances of one call, the same for every cap lease it carries. */
export interface CallMode {
  /** Idle leases are to be shrunk in this call. */
  release: boolean;
  /** The pod is giving its leases back. */
  closed: boolean;
  nowMs: number;
  ttlMs: number;
}

/** What one cap lease puts in a call. */
export interface CapPlan {
  /** What the store is to count as spent should the pod die. */
  committed: number;
  /** The lease beyond `committed` asked for, or KEEP. */
  want: number;
  need: number;
  /** The lease goes down to what runs (idle, or the pod closing). */
  shrink: boolean;
}

/**
 * Whether an idle cap lease goes down to what runs in this call: a call that shrinks leases, no
 * request waiting on it, and no request admitted on it for a third of the TTL (or the pod closing).
 */
export const capShrinks = (lastAdmitMs: number, need: number, mode: CallMode): boolean =>
  mode.release && need === 0 && (mode.closed || lastAdmitMs < mode.nowMs - mode.ttlMs / 3);

/**
 * What the store counts as spent should the pod die: what runs, and, when `ahead` requests' worth
 * may be committed (a plain report), that much more within what the lease holds. A call that asks
 * for room commits exactly what runs: the store grants on top of it, near the cap too.
 */
export const capCommitment = (l: Readonly<CapAmounts>, ahead: number): number =>
  Math.max(l.inflight, Math.min(Math.max(0, l.granted - l.used), l.inflight + ahead));

/**
 * A cap lease in a call, or undefined when it holds nothing and nothing asks for it. A request
 * waiting (`need`) asks for CAP_WANT_REQUESTS of its estimate; a shrinking lease for nothing beyond
 * what runs; a report keeps the lease and commits COMMIT_AHEAD_REQUESTS of the last estimate ahead
 * (none near the cap or while closing).
 */
export function planCap(
  l: Readonly<CapAmounts & { lastAdmitMs: number }>,
  need: number,
  mode: CallMode,
): CapPlan | undefined {
  const shrink = capShrinks(l.lastAdmitMs, need, mode);
  if (!need && !shrink && l.used === 0 && !l.inflight && l.granted === 0) return undefined;
  const want = need ? need * CAP_WANT_REQUESTS : shrink ? 0 : KEEP;
  const ahead = need || shrink || l.tight || mode.closed ? 0 : COMMIT_AHEAD_REQUESTS * l.lastNeed;
  return { committed: capCommitment(l, ahead), want, need, shrink };
}

/** A rate lease idle for `idleMs` with units left: they go back to the limit. */
export const rateIdle = (l: Readonly<RateLease>, nowMs: number, idleMs: number): boolean =>
  l.units > 0 && l.lastAdmitMs <= nowMs - idleMs;

/** A cap lease with something to give back or keep alive. */
export const capHolds = (l: Readonly<CapAmounts>): boolean => l.granted > l.inflight || l.inflight > 0;

/** A cap lease the store holds nothing of and nothing runs on: the pod forgets it. */
export const capEmpty = (l: Readonly<CapAmounts>): boolean =>
  l.granted === 0 && l.inflight === 0 && l.used === 0;

/** A rate lease holding no units, idle past the TTL: the pod forgets it. */
export const rateForgotten = (l: Readonly<RateLease>, nowMs: number, ttlMs: number): boolean =>
  l.units === 0 && l.lastAdmitMs < nowMs - ttlMs;
