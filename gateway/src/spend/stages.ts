import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import {
  GatewayError,
  projectBudgetConfigError,
  projectBudgetExceeded,
  rateLimited,
  type SkippedAttempt,
  workflowBudgetConfigError,
} from '../errors/index.ts';
import { rateLimitHeaders } from '../limits/headers.ts';
import { limited, type RateLimit, requestLimits, usesTokens } from '../limits/rates.ts';
import type { Exchange } from '../pipeline/exchange.ts';
import type { Prepared } from '../pipeline/prepare.ts';
import type { Completion, PipelineStages } from '../pipeline/stages.ts';
import type { SlotGuard, StreamBudget } from '../routing/plan.ts';
import type { RuntimeProject, RuntimeSlot } from '../snapshot/runtime.ts';
import {
  createOutageMetrics,
  decideOnOutage,
  type OutageFeature,
  type OutageMetrics,
  type OutagePolicy,
  outagePolicyFromEnv,
} from '../state/failure-policy.ts';
import type { RuntimeState } from '../state/types.ts';
import { type Estimate, estimate, streamBlock } from './estimate.ts';
import { MemoryGuardStore } from './memory-store.ts';
import { RedisGuardStore } from './redis-store.ts';
import { type CapRule, capRef, capsOf } from './rules.ts';
import type { GuardStore } from './store.ts';
import { type CapInPeriod, CapReporter } from './thresholds.ts';

export interface LimitDeps {
  state: RuntimeState;
  metrics: { registry: Registry };
  logger: Logger;
  now: () => number;
  /** Default: SWITCHYARD_RATE_LIMITS_ON_REDIS_DOWN / SWITCHYARD_SPEND_CAPS_ON_REDIS_DOWN. */
  policy?: OutagePolicy;
  /** Default: the memory store without Redis, the Redis store on `state.redis`. */
  store?: GuardStore;
  /**
   * How long past the provider's total timeout a reservation is held before it counts as spent
   * (default 10 s, SWITCHYARD_SPEND_RESERVATION_GRACE_MS): the time a live pod needs to settle.
   */
  reservationGraceMs?: number;
}

/** What one request holds between admission and `completed`. */
interface Held {
  projectId: string;
  rules: CapRule[];
  caps: CapInPeriod[];
  /** Reserved against the project caps; also the cost assumed when the real one is unknown. */
  micros: number;
  tokenLimits: RateLimit[];
  tokens: number;
  /** A refusal kept until we know the request is not a cache hit (rule 2). */
  deferred?: GatewayError;
}

const envGrace = (): number => {
  const v = Number(process.env.SWITCHYARD_SPEND_RESERVATION_GRACE_MS);
  return Number.isFinite(v) && v >= 0 ? v : 10_000;
};

/**
 * Rate limits and spend caps (issue 10, DESIGN.md "Money and limits") as pipeline stages:
 * - admit: the project's and the key's GCRA limits and the project caps' reservation, in ONE script
 *   call (one Redis round trip); refusals are 429 / 402 / 422, an outage 503 or open per policy;
 * - slotGuard: per-slot caps, reserved as the chain reaches each slot, a slot over its cap skipped;
 * - completed: settles the project reservation with the real cost and corrects token limits.
 * Requests of projects and keys with neither limits nor caps cost one WeakMap lookup.
 *
 * Wraps `inner` so features that also use `completed` (cache store, sessions) keep theirs.
 */
export function withSpendAndLimits(inner: PipelineStages, deps: LimitDeps): PipelineStages {
  const store =
    deps.store ?? (deps.state.redis ? new RedisGuardStore(deps.state.redis) : new MemoryGuardStore(deps.now));
  const policy = deps.policy ?? outagePolicyFromEnv();
  const outage: OutageMetrics = createOutageMetrics(deps.metrics.registry, { now: deps.now });
  const reporter = new CapReporter(deps.metrics.registry, deps.state, deps.now);
  const grace = deps.reservationGraceMs ?? envGrace();
  const held = new WeakMap<Exchange, Held>();

  const deadlineOf = (slot: RuntimeSlot | undefined, now: number): number =>
    now + (slot?.target.timeouts.totalMs ?? 300_000) + grace;

  /** 503 when the policy closes; true when the check is to be skipped. */
  const onOutage = (feature: OutageFeature, err: unknown): true => {
    if (decideOnOutage(feature, policy, outage, deps.logger, err) === 'closed')
      throw new GatewayError(
        'service_unavailable',
        feature === 'spend_caps'
          ? 'Spend caps cannot be checked right now; the request was not sent. It is safe to retry.'
          : 'Rate limits cannot be checked right now; the request was not sent. It is safe to retry.',
        { retryAfterSeconds: 1, cause: err },
      );
    return true;
  };

  async function admit(ex: Exchange, p: Prepared): Promise<void> {
    await inner.admit(ex, p);
    const project = ex.auth.project;
    const pc = project.config;
    const key = ex.auth.key;
    const rules = capsOf(pc).project;
    if (!rules.length && !limited(pc.rateLimit) && !limited(key.rateLimit)) return;
    const now = deps.now();
    const primary = p.plan.slots[0];
    const est: Estimate =
      primary && (rules.length || usesTokens(pc.rateLimit) || usesTokens(key.rateLimit))
        ? estimate(p.request, project, primary)
        : { tokens: 0, micros: 0 };
    const limits = requestLimits(pc.id, pc.rateLimit, key.keyId, key.rateLimit, est.tokens);
    const cacheable = (p.plan.workflow?.config.responseCacheTtlSeconds ?? 0) > 0;
    let caps: CapInPeriod[] = rules.map((r) => capRef(pc.id, r, now));
    let deferred: GatewayError | undefined;
    // Rule 3: a project cap with unknown pricing for the routed model blocks the request, but only
    // once we know it will reach a provider (a cache hit passes, rule 2).
    if (caps.length && est.micros === null) {
      deferred = projectBudgetConfigError(primary?.provider ?? '', primary?.model ?? '');
      if (!cacheable) throw deferred;
      caps = [];
    }
    const h: Held = {
      projectId: pc.id,
      rules: caps.length ? rules : [],
      caps,
      micros: est.micros ?? 0,
      tokenLimits: limits.filter((l) => l.kind === 'tokens'),
      tokens: est.tokens,
      ...(deferred ? { deferred } : {}),
    };
    if (!limits.length && !caps.length) {
      held.set(ex, h);
      return;
    }
    let res: Awaited<ReturnType<GuardStore['reserve']>>;
    try {
      res = await store.reserve({
        member: `${ex.id}:project`,
        amountMicros: h.micros,
        deadlineMs: deadlineOf(primary, now),
        nowMs: now,
        rates: limits.map((l) => l.ref),
        caps,
      });
    } catch (err) {
      if (caps.length) onOutage('spend_caps', err);
      if (limits.length) onOutage('rate_limits', err);
      // Open: the request goes on unchecked, and nothing is held for it.
      return;
    }
    if (!res.ok && res.kind === 'rate') {
      const l = limits[res.index]!;
      throw rateLimited(
        l.scope,
        l.kind,
        l.perMinute,
        res.retryMs,
        rateLimitHeaders(limits, res.rates, res.retryMs),
      );
    }
    if (!res.ok) {
      reporter.crossed(pc.id, pc.requestLogs.maxEntries, ex.id, rules, caps, res.crossings);
      const rule = rules[res.index]!;
      reporter.used(pc.id, rule, res.spentMicros);
      const refusal = projectBudgetExceeded({
        capId: rule.config.id,
        period: rule.config.period,
        limitMicros: rule.limitMicros,
        spentMicros: res.spentMicros,
        resetAt: caps[res.index]!.resetAt,
      });
      if (!cacheable) throw refusal;
      h.deferred = refusal;
      h.caps = [];
      h.rules = [];
    } else reporter.crossed(pc.id, pc.requestLogs.maxEntries, ex.id, rules, caps, res.crossings);
    held.set(ex, h);
  }

  function slotGuard(ex: Exchange, p: Prepared): SlotGuard | undefined {
    const h = held.get(ex);
    // The request is about to reach a provider: a project refusal kept for a possible cache hit applies now.
    if (h?.deferred) throw h.deferred;
    const outer = inner.slotGuard(ex, p);
    const wf = p.plan.workflow;
    const bySlot = wf ? capsOf(ex.auth.project.config).slots.get(wf.config.name) : undefined;
    // A stream under a project cap needs a guard too: it may outgrow the project reservation.
    const streamed = ex.record.stream === true && h !== undefined && h.caps.length > 0 ? h : undefined;
    if (!bySlot && !streamed) return outer;
    return workflowGuard(ex, p, wf?.config.name ?? '', bySlot ?? new Map(), streamed);
  }

  function workflowGuard(
    ex: Exchange,
    p: Prepared,
    workflow: string,
    bySlot: Map<string, CapRule[]>,
    projectHeld: Held | undefined,
  ): SlotGuard {
    const project: RuntimeProject = ex.auth.project;
    const pc = project.config;
    const estimates = new Map<string, number>();
    const unpriced: SkippedAttempt[] = [];
    for (const slot of p.plan.slots) {
      if (!bySlot.has(slot.slot)) continue;
      const e = estimate(p.request, project, slot);
      if (e.micros === null)
        unpriced.push({
          provider: slot.provider,
          model: slot.model,
          status: 'skipped',
          reason: {
            message: `${slot.slot} is capped but model "${slot.model}" has no pricing for this request`,
          },
        });
      else estimates.set(slot.slot, e.micros);
    }
    if (unpriced.length) throw workflowBudgetConfigError(workflow, unpriced);
    const reserved = new Map<string, CapInPeriod[]>();
    const settleSlot = (slot: RuntimeSlot, actual: number): void => {
      const caps = reserved.get(slot.slot);
      if (!caps) return;
      reserved.delete(slot.slot);
      estimates.delete(slot.slot);
      const rules = bySlot.get(slot.slot)!;
      store
        .settle({ member: `${ex.id}:${slot.slot}`, actualMicros: actual, nowMs: deps.now(), caps })
        .then((s) => {
          s.spent.forEach((v, i) => {
            if (v !== null) reporter.used(pc.id, rules[i]!, v);
          });
          reporter.crossed(pc.id, pc.requestLogs.maxEntries, ex.id, rules, caps, s.crossings);
        })
        .catch((err) => deps.logger.warn({ msg: 'spend: slot settle failed', err: String(err) }));
    };
    return {
      async check(slot) {
        const rules = bySlot.get(slot.slot);
        if (!rules) return { skip: false };
        const now = deps.now();
        const caps = rules.map((r) => capRef(pc.id, r, now));
        let res: Awaited<ReturnType<GuardStore['reserve']>>;
        try {
          res = await store.reserve({
            member: `${ex.id}:${slot.slot}`,
            amountMicros: estimates.get(slot.slot)!,
            deadlineMs: deadlineOf(slot, now),
            nowMs: now,
            rates: [],
            caps,
          });
        } catch (err) {
          onOutage('spend_caps', err);
          return { skip: false };
        }
        if (res.ok || res.kind === 'cap')
          reporter.crossed(pc.id, pc.requestLogs.maxEntries, ex.id, rules, caps, res.crossings);
        if (res.ok) {
          reserved.set(slot.slot, caps);
          return { skip: false };
        }
        const rule = rules[res.kind === 'cap' ? res.index : 0]!;
        const c = rule.config;
        return {
          skip: true,
          message: `spend cap ${c.id} (${c.period}, $${c.limitUsd}) on ${slot.slot} is reached`,
        };
      },
      release(slot) {
        settleSlot(slot, 0);
      },
      commit(slot) {
        // describe.ts priced the answer at list price before the chain commits; unknown (a stream
        // stopped before its usage came) stays what was reserved.
        settleSlot(slot, ex.record.costMicros ?? estimates.get(slot.slot) ?? 0);
      },
      stream(slot) {
        const block = streamBlock(p.request, project, slot);
        const slotCaps = reserved.get(slot.slot);
        if (!block || (!slotCaps && !projectHeld)) return undefined;
        const budget: StreamBudget = {
          outputTokens: block.tokens,
          extend: async () => {
            const now = deps.now();
            const more = (member: string, caps: CapInPeriod[]) =>
              store.reserve({
                member,
                amountMicros: block.micros,
                deadlineMs: deadlineOf(slot, now),
                nowMs: now,
                rates: [],
                caps,
              });
            try {
              const [s, pr] = await Promise.all([
                slotCaps ? more(`${ex.id}:${slot.slot}`, slotCaps) : undefined,
                projectHeld ? more(`${ex.id}:project`, projectHeld.caps) : undefined,
              ]);
              if (s?.ok) estimates.set(slot.slot, (estimates.get(slot.slot) ?? 0) + block.micros);
              if (pr?.ok && projectHeld) projectHeld.micros += block.micros;
              if (s && !s.ok) {
                const c = bySlot.get(slot.slot)![s.kind === 'cap' ? s.index : 0]!.config;
                return {
                  ok: false,
                  code: 'workflow_budget_exceeded',
                  message: `The stream was stopped: spend cap ${c.id} (${c.period}, $${c.limitUsd}) on ${slot.slot} is reached.`,
                };
              }
              if (pr && !pr.ok && projectHeld) {
                const c = projectHeld.rules[pr.kind === 'cap' ? pr.index : 0]!.config;
                return {
                  ok: false,
                  code: 'project_budget_exceeded',
                  message: `The stream was stopped: the project's ${c.period} spend cap of $${c.limitUsd} is reached.`,
                };
              }
            } catch (err) {
              if (decideOnOutage('spend_caps', policy, outage, deps.logger, err) === 'closed')
                return {
                  ok: false,
                  code: 'service_unavailable',
                  message: 'The stream was stopped: spend caps cannot be checked right now.',
                };
            }
            return { ok: true, outputTokens: budget.outputTokens + block.tokens };
          },
        };
        return budget;
      },
    };
  }

  function completed(ex: Exchange, p: Prepared, done: Completion): void {
    inner.completed(ex, p, done);
    const h = held.get(ex);
    if (!h) return;
    held.delete(ex);
    const fromCache = 'fromCache' in done && done.fromCache;
    if (h.caps.length) {
      const actual = fromCache ? 0 : ex.record.costMicros === null ? h.micros : (ex.record.costMicros ?? 0);
      store
        .settle({ member: `${ex.id}:project`, actualMicros: actual, nowMs: deps.now(), caps: h.caps })
        .then((s) => {
          s.spent.forEach((v, i) => {
            if (v !== null) reporter.used(h.projectId, h.rules[i]!, v);
          });
          reporter.crossed(
            h.projectId,
            ex.auth.project.config.requestLogs.maxEntries,
            ex.id,
            h.rules,
            h.caps,
            s.crossings,
          );
        })
        .catch((err) => deps.logger.warn({ msg: 'spend: settle failed', err: String(err) }));
    }
    if (h.tokenLimits.length) {
      const real = fromCache ? 0 : (done.usage?.total_tokens ?? (done.ok ? h.tokens : 0));
      for (const l of h.tokenLimits) store.correct(l.ref, real - l.ref.cost);
    }
  }

  return { ...inner, admit, slotGuard, completed };
}
