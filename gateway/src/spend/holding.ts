import type { CapLease, RateLease } from './lease-types.ts';
import type { Leases } from './leases.ts';
import type { CapRule } from './rules.ts';

/** What a request holds on the caps of one scope (the project's, or one slot's): one amount on each. */
export interface CapHold {
  rules: CapRule[];
  leases: CapLease[];
  /** µUSD held on each (grows with stream extensions): the cost assumed when the real one is unknown. */
  micros: number;
}

/** Token units a request took from token limits, to correct with its real usage. */
export interface TokenHold {
  leases: RateLease[];
  units: number[];
}

/** A request's cap hold ends: its estimate leaves the leases and its real cost (0: given back) is recorded. */
export function release(leases: Leases, hold: CapHold | undefined, actual: number, requestId: string): void {
  if (!hold) return;
  for (const l of hold.leases) leases.finish(l, hold.micros, actual, requestId);
}

/** Token limits corrected by what the request really used (`real` tokens; 0 gives back all). */
export function correct(leases: Leases, hold: TokenHold, real: number): void {
  hold.leases.forEach((l, i) => {
    leases.correct(l, real - hold.units[i]!);
  });
}
