import type { Logger } from 'pino';
import type { Counter, Registry } from 'prom-client';
import { z } from 'zod';
import { ConfigError } from '../config/env.ts';
import { stateUnavailableCounter } from './metrics.ts';

/**
 * What a feature does when runtime state (Redis) cannot answer: `open` lets the request through
 * unchecked, `closed` refuses it (503 service_unavailable). Rate limits
 * fail open (an outage must not take the API down), spend caps fail closed (an outage must not
 * spend money nobody can account for); each is switchable, and every decision is counted and logged.
 */
export type OutageDecision = 'open' | 'closed';
export type OutageFeature = 'rate_limits' | 'spend_caps';

const decision = z.enum(['open', 'closed']);

const policyEnv = z.object({
  SWITCHYARD_RATE_LIMITS_ON_REDIS_DOWN: decision.default('open'),
  SWITCHYARD_SPEND_CAPS_ON_REDIS_DOWN: decision.default('closed'),
});

export interface OutagePolicy {
  rate_limits: OutageDecision;
  spend_caps: OutageDecision;
}

export const DEFAULT_OUTAGE_POLICY: Readonly<OutagePolicy> = { rate_limits: 'open', spend_caps: 'closed' };

export function outagePolicyFromEnv(env: NodeJS.ProcessEnv = process.env): OutagePolicy {
  const parsed = policyEnv.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message} (open or closed)`);
    throw new ConfigError(`invalid environment:\n  ${lines.join('\n  ')}`);
  }
  return {
    rate_limits: parsed.data.SWITCHYARD_RATE_LIMITS_ON_REDIS_DOWN,
    spend_caps: parsed.data.SWITCHYARD_SPEND_CAPS_ON_REDIS_DOWN,
  };
}

/** The counter plus when each feature last logged, so an outage under load logs a line per interval, not per request. */
export interface OutageMetrics {
  counter: Counter<'feature' | 'decision'>;
  logEveryMs: number;
  now: () => number;
  lastLogged: Map<OutageFeature, { at: number; unlogged: number }>;
}

export function createOutageMetrics(
  registry: Registry,
  opts: { logEveryMs?: number; now?: () => number } = {},
): OutageMetrics {
  return {
    counter: stateUnavailableCounter(registry),
    logEveryMs: opts.logEveryMs ?? 10_000,
    now: opts.now ?? Date.now,
    lastLogged: new Map(),
  };
}

/**
 * Called by a feature that could not reach runtime state: returns what to do with the request per
 * the policy, counts it (switchyard_state_unavailable_total{feature,decision}) and logs it (the first
 * time, then at most once per interval with the number of decisions since).
 */
export function decideOnOutage(
  feature: OutageFeature,
  policy: OutagePolicy,
  metrics: OutageMetrics,
  logger: Logger,
  cause?: unknown,
): OutageDecision {
  const d = policy[feature];
  metrics.counter.inc({ feature, decision: d });
  const now = metrics.now();
  let seen = metrics.lastLogged.get(feature);
  if (!seen) {
    seen = { at: -Infinity, unlogged: 0 };
    metrics.lastLogged.set(feature, seen);
  }
  seen.unlogged++;
  if (now - seen.at >= metrics.logEveryMs) {
    logger.warn({
      msg:
        d === 'open'
          ? `state unavailable: ${feature} not enforced (fail open)`
          : `state unavailable: requests refused, ${feature} cannot be checked (fail closed)`,
      feature,
      decision: d,
      decisions: seen.unlogged,
      err: cause === undefined ? undefined : String(cause),
    });
    seen.at = now;
    seen.unlogged = 0;
  }
  return d;
}
