import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { limited, requestLimits } from '../limits/rates.ts';
import type { Exchange } from '../pipeline/exchange.ts';
import type { Feature, FeatureRun, RunEnd } from '../pipeline/feature.ts';
import type { Prepared } from '../pipeline/prepare.ts';
import { createOutageMetrics, type OutagePolicy, outagePolicyFromEnv } from '../state/failure-policy.ts';
import { type Admitted, admit } from './admission.ts';
import type { SpendContext } from './context.ts';
import { type CapRule, capsOf } from './rules.ts';
import { corrected, Settlement } from './settlement.ts';
import { type SlotHolds, slotGuard, streamBudget } from './slot-guard.ts';
import type { GuardStore } from './store.ts';
import { CapReporter, type ThresholdSink } from './thresholds.ts';

export interface LimitsAndCapsDeps {
  store: GuardStore;
  registry: Registry;
  logger: Logger;
  now: () => number;
  /** Where `budget.threshold` events go (request log and webhooks). */
  thresholds: ThresholdSink;
  /** Default: SWITCHYARD_RATE_LIMITS_ON_REDIS_DOWN / SWITCHYARD_SPEND_CAPS_ON_REDIS_DOWN. */
  policy?: OutagePolicy;
  /**
   * How long past the provider's total timeout a reservation is held before it counts as spent
   * (default 10 s, SWITCHYARD_SPEND_RESERVATION_GRACE_MS): the time a live pod needs to settle.
   */
  reservationGraceMs?: number;
}

const envGrace = (): number => {
  const v = Number(process.env.SWITCHYARD_SPEND_RESERVATION_GRACE_MS);
  return Number.isFinite(v) && v >= 0 ? v : 10_000;
};

/** An async job's token units, taken on the exchange that accepted it: what its real usage corrects. */
function carriedLimits(ex: Exchange): { limits: ReturnType<typeof requestLimits>; tokens: number } {
  const tokens = ex.carried?.admittedTokens;
  if (tokens === undefined) return { limits: [], tokens: 0 };
  const { project, key } = ex.auth;
  const limits = requestLimits(project.config.id, project.config.rateLimit, key.keyId, key.rateLimit, tokens);
  return { limits: limits.filter((l) => l.kind === 'tokens'), tokens };
}

/**
 * Rate limits and spend caps. One exchange's whole lifecycle is `begin` below:
 * - begin: admission (admission.ts), the project's and key's limits, the project caps and the
 *   primary slot's caps in ONE store call; refusals are 429 / 402 / 422, an outage 503 or open
 *   by policy;
 * - toChain: a refusal kept for a possible cache hit applies; the slot guard (slot-guard.ts)
 *   reserves each further capped slot as the chain reaches it;
 * - finish: everything held is settled with the real cost, or given back, and token limits are
 *   corrected with the real usage, in ONE store call (settlement.ts).
 * Every reservation of an exchange is one member (its id) in the hash of each cap it touches.
 */
export function limitsAndCaps(deps: LimitsAndCapsDeps): Feature {
  const ctx: SpendContext = {
    store: deps.store,
    policy: deps.policy ?? outagePolicyFromEnv(),
    outage: createOutageMetrics(deps.registry, { now: deps.now }),
    reporter: new CapReporter(deps.registry, deps.thresholds, deps.now),
    logger: deps.logger,
    now: deps.now,
    graceMs: deps.reservationGraceMs ?? envGrace(),
  };

  return {
    name: 'limits-and-caps',
    begin({ ex, p, providerOptional }) {
      const pc = ex.auth.project.config;
      const key = ex.auth.key;
      const bySlot = p.plan.workflow ? capsOf(pc).slots.get(p.plan.workflow.config.name) : undefined;
      const rates =
        (ex.kind === 'request' || ex.kind === 'accept') && (limited(pc.rateLimit) || limited(key.rateLimit));
      // Exchanges nothing limits or caps cost a few property reads.
      if (!rates && !bySlot && !capsOf(pc).project.length && ex.carried?.admittedTokens === undefined)
        return undefined;
      return run(ex, p, providerOptional, bySlot);
    },
  };

  async function run(
    ex: Exchange,
    p: Prepared,
    providerOptional: boolean,
    bySlot: Map<string, CapRule[]> | undefined,
  ): Promise<FeatureRun | undefined> {
    const pc = ex.auth.project.config;
    const carried = ex.kind === 'job' ? carriedLimits(ex) : { limits: [], tokens: 0 };
    const a: Admitted | undefined = await admit(ctx, ex, p, providerOptional);
    if (!a && !bySlot && !carried.limits.length) return undefined;
    const tokenLimits = a?.tokenLimits.length ? a.tokenLimits : carried.limits;
    const taken = a?.tokenLimits.length ? a.tokens : carried.tokens;
    const holds: SlotHolds = { reserved: new Map(), project: a?.project };
    if (a?.primary.kind === 'reserved') holds.reserved.set('primary', a.primary.held);
    const settlement = new Settlement(ctx, ex.id, { id: pc.id, logCap: pc.requestLogs.maxEntries });

    const giveBack = (): void => {
      settlement.caps(holds.project, 0);
      for (const h of holds.reserved.values()) settlement.caps(h, 0);
      settlement.tokens(corrected(tokenLimits, 0));
    };

    return {
      notes: {
        ...(a?.headers ? { rateLimitHeaders: a.headers } : {}),
        ...(ex.kind === 'accept' && a?.tokenLimits.length ? { carried: { admittedTokens: a.tokens } } : {}),
      },
      toChain(final) {
        // The request reaches a provider: a refusal kept for a possible cache hit applies now.
        if (a?.deferred) throw a.deferred;
        if (bySlot)
          return slotGuard(ctx, ex, final, bySlot, a?.primary ?? { kind: 'none' }, holds, (h) =>
            settlement.caps(h, 0),
          );
        // Project caps alone: only a stream can outgrow what admission reserved.
        return holds.project ? { stream: (slot) => streamBudget(ctx, ex, final, slot, holds) } : undefined;
      },
      finish(end: RunEnd) {
        if (end.kind === 'refused') {
          giveBack();
          return undefined;
        }
        if (end.kind === 'queued') {
          // The job reserves for itself; the rate units taken stand until it ends and corrects them.
          settlement.caps(holds.project, 0);
          for (const h of holds.reserved.values()) settlement.caps(h, 0);
          return undefined;
        }
        const answered = end.kind === 'answered';
        const slot = answered ? end.answer.slot : end.failure.slot;
        const cost = answered ? end.answer.costMicros : end.failure.costMicros;
        const usage = answered ? end.answer.usage : end.failure.usage;
        // Unknown cost (unpriced, or a stream without usage) stays what was reserved.
        settlement.caps(holds.project, cost ?? holds.project?.micros ?? 0);
        for (const [name, h] of holds.reserved)
          settlement.caps(h, slot?.slot === name ? (cost ?? h.micros) : 0);
        // Token limits: an answer without a provider used none; one without reported usage counts as estimated.
        const real = answered && !slot ? 0 : (usage?.total_tokens ?? (answered ? taken : 0));
        settlement.tokens(corrected(tokenLimits, real));
        return undefined;
      },
    };
  }
}
