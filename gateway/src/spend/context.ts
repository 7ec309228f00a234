import type { Logger } from 'pino';
import { GatewayError } from '../errors/index.ts';
import {
  decideOnOutage,
  type OutageFeature,
  type OutageMetrics,
  type OutagePolicy,
} from '../state/failure-policy.ts';
import { type LeaseNeeds, LeasesUnavailableError, type Taken } from './lease-types.ts';
import type { Leases } from './leases.ts';
import type { CapRule } from './rules.ts';
import type { GuardStore } from './store.ts';
import type { CapReporter } from './thresholds.ts';

/** What the limits-and-caps feature shares across requests: the pod's leases, the outage policy, reporting. */
export interface SpendContext {
  leases: Leases;
  store: GuardStore;
  policy: OutagePolicy;
  outage: OutageMetrics;
  reporter: CapReporter;
  logger: Logger;
  now: () => number;
}

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
 * The one admission path: the request takes from the pod's leases (leases.ts), which call the store
 * only when one runs short, and answer at once otherwise. When the store is unreachable the outage
 * policy decides, for each of the `features` the request is subject to: closed refuses (503), open
 * returns undefined (the request goes on unchecked, holding nothing).
 */
export function take(
  ctx: SpendContext,
  projectId: string,
  needs: LeaseNeeds,
  features: readonly OutageFeature[],
): Taken | undefined | Promise<Taken | undefined> {
  if (!ctx.store.reachable()) {
    const down = new Error('the runtime-state store is unreachable');
    for (const f of features) onOutage(ctx, f, down);
    return undefined;
  }
  const taken = ctx.leases.take(projectId, needs);
  if (!(taken instanceof Promise)) return taken;
  return taken.catch((err: unknown) => {
    if (!(err instanceof LeasesUnavailableError)) throw err;
    for (const f of features) onOutage(ctx, f, err);
    return undefined;
  });
}

export const skipMessage = (rule: CapRule, slot: string): string =>
  `spend cap ${rule.config.id} (${rule.config.period}, $${rule.config.limitUsd}) on ${slot} is reached`;
