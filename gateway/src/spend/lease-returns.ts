/**
 * What moves through a pod's cap and rate leases as requests end and calls are sent, answered or
 * lost (leases.ts): what counts as used, what a report takes out, and what a failed call puts back.
 * Pure arithmetic on a lease's amounts: each function answers the new amounts, the caller stores them.
 */
import type { CapAmounts } from './lease-types.ts';

/**
 * A request admitted on a cap lease ended: its estimate leaves what runs and its real cost joins
 * what is used, to be reported (0: nothing was spent, the estimate is all given back).
 */
export const capFinished = (
  l: Readonly<CapAmounts>,
  estimate: number,
  actual: number,
): Pick<CapAmounts, 'inflight' | 'used'> => ({ inflight: l.inflight - estimate, used: l.used + actual });

/**
 * A report of `sent` µUSD is under way: it leaves the lease at once, as the store moves it from the
 * lease to spent, so the lease stays exact for requests admitted while the call is under way.
 */
export const capReported = (l: Readonly<CapAmounts>, sent: number): Pick<CapAmounts, 'used' | 'granted'> => ({
  used: l.used - sent,
  granted: Math.max(0, l.granted - sent),
});

/**
 * The call carrying a report of `sent` µUSD failed: nothing was applied, so it is owed again (the
 * next call carries it), no shrink is under way, and the store may count the earlier commitment or
 * the one sent: the smaller, nothing, is assumed.
 */
export const capUnsent = (
  l: Readonly<CapAmounts>,
  sent: number,
): Pick<CapAmounts, 'used' | 'granted' | 'ceiling' | 'committed'> => ({
  used: l.used + sent,
  granted: l.granted + sent,
  ceiling: Number.POSITIVE_INFINITY,
  committed: 0,
});

/**
 * Units a rate lease holds once a request's real usage is known: `delta` more than it took is taken
 * from the lease (below zero: owed to the limit), less comes back to it.
 */
export const rateCorrected = (units: number, delta: number): number => units - delta;

/** The call that gave back (or paid) `give` units failed: the lease holds them again. */
export const rateUnsent = (units: number, give: number): number => units + give;
