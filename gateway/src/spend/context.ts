import type { Logger } from 'pino';
import { GatewayError } from '../errors/index.ts';
import type { RuntimeSlot } from '../snapshot/runtime.ts';
import {
  decideOnOutage,
  type OutageFeature,
  type OutageMetrics,
  type OutagePolicy,
} from '../state/failure-policy.ts';
import type { CapRule } from './rules.ts';
import type { GuardStore, ReserveInput, ReserveResult } from './store.ts';
import type { CapInPeriod, CapReporter } from './thresholds.ts';

/** Caps of one scope that a request holds a reservation on. */
export interface HeldCaps {
  rules: CapRule[];
  caps: CapInPeriod[];
  /** Reserved so far (grows with stream extensions): the cost assumed when the real one is unknown. */
  micros: number;
}

/** What the limits-and-caps feature shares across requests: the store, the outage policy, reporting. */
export interface SpendContext {
  store: GuardStore;
  policy: OutagePolicy;
  outage: OutageMetrics;
  reporter: CapReporter;
  logger: Logger;
  now: () => number;
  /** How long past the provider's total timeout a reservation is held before it counts as spent. */
  graceMs: number;
}

/** When a reservation on `slot` counts as spent if nobody settles it (a killed pod). */
export const deadlineOf = (ctx: SpendContext, slot: RuntimeSlot | undefined, now: number): number =>
  now + (slot?.target.timeouts.totalMs ?? 300_000) + ctx.graceMs;

/** The 503 of a closed outage policy; returns when the policy lets the request through (open). */
export function onOutage(ctx: SpendContext, feature: OutageFeature, err: unknown): void {
  if (decideOnOutage(feature, ctx.policy, ctx.outage, ctx.logger, err) === 'closed')
    throw new GatewayError(
      'service_unavailable',
      feature === 'spend_caps'
        ? 'Spend caps cannot be checked right now; the request was not sent. It is safe to retry.'
        : 'Rate limits cannot be checked right now; the request was not sent. It is safe to retry.',
      { retryAfterSeconds: 1, cause: err },
    );
}

/**
 * The one reservation path: a store call, its crossings and gauge reported, and an outage decided
 * by policy (`features` says which policies the call is subject to). Undefined: the store could not
 * be reached and the policy lets the request through unchecked.
 */
export async function reserve(
  ctx: SpendContext,
  exchangeId: string,
  project: { id: string; logCap: number },
  input: ReserveInput,
  rules: readonly CapRule[],
  features: readonly OutageFeature[],
): Promise<ReserveResult | undefined> {
  let res: ReserveResult;
  try {
    res = await ctx.store.reserve(input);
  } catch (err) {
    for (const f of features) onOutage(ctx, f, err);
    return undefined;
  }
  if (res.ok || res.kind === 'cap')
    ctx.reporter.crossed(
      project.id,
      project.logCap,
      exchangeId,
      rules,
      input.caps as CapInPeriod[],
      res.crossings,
    );
  if (!res.ok && res.kind === 'cap') ctx.reporter.used(project.id, rules[res.index]!, res.spentMicros);
  return res;
}

export const skipMessage = (rule: CapRule, slot: string): string =>
  `spend cap ${rule.config.id} (${rule.config.period}, $${rule.config.limitUsd}) on ${slot} is reached`;
