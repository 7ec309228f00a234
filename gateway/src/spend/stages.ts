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
import type { Completion, Durable, PipelineStages } from '../pipeline/stages.ts';
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
import type { CapSettle, GuardStore, RateCorrection, ReserveResult } from './store.ts';
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

/** Caps of one scope that a request holds a reservation on. */
interface HeldCaps {
  rules: CapRule[];
  caps: CapInPeriod[];
  /** Reserved so far (grows with stream extensions): the cost assumed when the real one is unknown. */
  micros: number;
}

/** What one request holds between admission and `completed`. */
interface Held {
  projectId: string;
  /** The project caps' reservation; undefined when the project has none (or it is deferred). */
  project: HeldCaps | undefined;
  /** The primary slot's caps, reserved at admission in the same call; or why the slot is skipped. */
  primary: HeldCaps | { skip: string } | undefined;
  tokenLimits: RateLimit[];
  tokens: number;
  /** A refusal kept until we know the request is not a cache hit (rule 2). */
  deferred?: GatewayError;
}

const envGrace = (): number => {
  const v = Number(process.env.SWITCHYARD_SPEND_RESERVATION_GRACE_MS);
  return Number.isFinite(v) && v >= 0 ? v : 10_000;
};

const skipMessage = (rule: CapRule, slot: string): string =>
  `spend cap ${rule.config.id} (${rule.config.period}, $${rule.config.limitUsd}) on ${slot} is reached`;

/**
 * Rate limits and spend caps (issue 10, DESIGN.md "Money and limits") as pipeline stages:
 * - admit: the project's and the key's GCRA limits, the project caps and the primary slot's caps,
 *   reserved in ONE script call (one Redis round trip); refusals are 429 / 402 / 422, an outage 503
 *   or open per policy;
 * - slotGuard: the backups' caps, reserved as the chain reaches each slot, a slot over its cap
 *   skipped; streams extend their reservations through it;
 * - completed: settles with the real cost and corrects token limits, in one script call with the
 *   answering slot's settle.
 * Every reservation of a request is one member (the request id) in the hash of each cap it touches.
 * Requests of projects and keys with neither limits nor caps cost one WeakMap lookup.
 *
 * Wraps `inner` so features that also use `completed` (cache store, sessions) keep theirs, and so a
 * stage that throws after admission (an unknown session) gives back what admission reserved.
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

  /** 503 when the policy closes; returns when the check is to be skipped (open). */
  const onOutage = (feature: OutageFeature, err: unknown): void => {
    if (decideOnOutage(feature, policy, outage, deps.logger, err) === 'closed')
      throw new GatewayError(
        'service_unavailable',
        feature === 'spend_caps'
          ? 'Spend caps cannot be checked right now; the request was not sent. It is safe to retry.'
          : 'Rate limits cannot be checked right now; the request was not sent. It is safe to retry.',
        { retryAfterSeconds: 1, cause: err },
      );
  };

  const report = (
    ex: Exchange,
    rules: readonly CapRule[],
    caps: readonly CapInPeriod[],
    r: ReserveResult,
  ) => {
    const pc = ex.auth.project.config;
    if (r.ok || r.kind === 'cap')
      reporter.crossed(pc.id, pc.requestLogs.maxEntries, ex.id, rules, caps, r.crossings);
    if (!r.ok && r.kind === 'cap') reporter.used(pc.id, rules[r.index]!, r.spentMicros);
  };

  /** What a request still has to write to its caps and limits. */
  const queued = new Map<
    Exchange,
    { rules: CapRule[]; caps: (CapSettle & CapInPeriod)[]; corrections: RateCorrection[] }
  >();

  /** One store call for everything `ex` settled in this tick; fire and forget, it travels with the log write. */
  const flush = (ex: Exchange): void => {
    const q = queued.get(ex);
    if (!q) return;
    queued.delete(ex);
    const pc = ex.auth.project.config;
    store
      .settle({ member: ex.id, nowMs: deps.now(), caps: q.caps, corrections: q.corrections })
      .then((s) => {
        s.spent.forEach((v, i) => {
          if (v !== null) reporter.used(pc.id, q.rules[i]!, v);
        });
        reporter.crossed(pc.id, pc.requestLogs.maxEntries, ex.id, q.rules, q.caps, s.crossings);
      })
      .catch((err) => deps.logger.warn({ msg: 'spend: settle failed', err: String(err) }));
  };

  /**
   * Replaces a reservation with the real cost and corrects token limits. What a request settles in
   * one tick (the answering slot's caps, the project caps, the token corrections) is queued and
   * written as ONE script call: a request costs two calls, admission and settle.
   */
  const settle = (
    ex: Exchange,
    h: HeldCaps | undefined,
    actual: number,
    corrections: readonly RateCorrection[] = [],
  ): void => {
    let q = queued.get(ex);
    if (!q) {
      q = { rules: [], caps: [], corrections: [] };
      queued.set(ex, q);
      queueMicrotask(() => flush(ex));
    }
    if (h)
      h.caps.forEach((c, i) => {
        q.rules.push(h.rules[i]!);
        q.caps.push({ ...c, actualMicros: actual });
      });
    q.corrections.push(...corrections);
  };

  /** Token limits moved by what the request really used (`real`) minus what it took at admission. */
  const corrected = (limits: readonly RateLimit[], real: number): RateCorrection[] =>
    limits.map((l) => ({ rate: l.ref, deltaUnits: real - l.ref.cost }));

  /** The token limits an async job's acceptance took `admittedTokens` from, on another exchange. */
  const acceptedLimits = (ex: Exchange): RateLimit[] => {
    const { project, key } = ex.auth;
    if (ex.admittedTokens === undefined) return [];
    return requestLimits(
      project.config.id,
      project.config.rateLimit,
      key.keyId,
      key.rateLimit,
      ex.admittedTokens,
    ).filter((l) => l.kind === 'tokens');
  };

  const projectRefusal = (h: HeldCaps, r: { index: number; spentMicros: number }): GatewayError => {
    const rule = h.rules[r.index]!;
    return projectBudgetExceeded({
      capId: rule.config.id,
      period: rule.config.period,
      limitMicros: rule.limitMicros,
      spentMicros: r.spentMicros,
      resetAt: h.caps[r.index]!.resetAt,
    });
  };

  /** Gives back everything a request still holds (it ends without reaching the chain). */
  function drop(ex: Exchange): void {
    const h = held.get(ex);
    if (!h) return;
    held.delete(ex);
    if (h.project) settle(ex, h.project, 0);
    if (h.primary && 'caps' in h.primary) settle(ex, h.primary, 0);
    if (h.tokenLimits.length) settle(ex, undefined, 0, corrected(h.tokenLimits, 0));
    // Given back here: nothing is left for `completed` (or a job) to correct.
    delete ex.admittedTokens;
  }

  async function admit(ex: Exchange, p: Prepared): Promise<void> {
    await inner.admit(ex, p);
    const project = ex.auth.project;
    const pc = project.config;
    const key = ex.auth.key;
    const rules = capsOf(pc).project;
    const wf = p.plan.workflow;
    const primarySlot = p.plan.slots[0];
    const cacheable = (wf?.config.responseCacheTtlSeconds ?? 0) > 0;
    // A cacheable request may be answered from the cache: its slots reserve only once it misses.
    const primaryRules = wf && !cacheable ? capsOf(pc).slots.get(wf.config.name)?.get('primary') : undefined;
    if (!rules.length && !primaryRules && !limited(pc.rateLimit) && !limited(key.rateLimit)) return;
    const now = deps.now();
    const est: Estimate =
      primarySlot && (rules.length || primaryRules || usesTokens(pc.rateLimit) || usesTokens(key.rateLimit))
        ? estimate(p.request, project, primarySlot)
        : { tokens: 0, micros: 0 };
    const limits = requestLimits(pc.id, pc.rateLimit, key.keyId, key.rateLimit, est.tokens);
    const h: Held = {
      projectId: pc.id,
      project: undefined,
      primary: undefined,
      tokenLimits: limits.filter((l) => l.kind === 'tokens'),
      tokens: est.tokens,
    };
    if (rules.length) {
      if (est.micros === null) {
        // Rule 3: unknown pricing for the routed model blocks, once it is known to reach a provider.
        h.deferred = projectBudgetConfigError(primarySlot?.provider ?? '', primarySlot?.model ?? '');
        if (!cacheable) throw h.deferred;
      } else h.project = { rules, caps: rules.map((r) => capRef(pc.id, r, now)), micros: est.micros };
    }
    // A capped primary without pricing is the slot guard's 422; nothing to reserve for it here.
    const primary =
      primaryRules && est.micros !== null
        ? { rules: primaryRules, caps: primaryRules.map((r) => capRef(pc.id, r, now)), micros: est.micros }
        : undefined;
    const projectCaps = h.project?.caps ?? [];
    const caps = primary ? [...projectCaps, ...primary.caps] : projectCaps;
    if (limits.length || caps.length) {
      let res: ReserveResult;
      try {
        res = await store.reserve({
          member: ex.id,
          amountMicros: est.micros ?? 0,
          deadlineMs: deadlineOf(primarySlot, now),
          nowMs: now,
          rates: limits.map((l) => l.ref),
          caps,
        });
      } catch (err) {
        if (caps.length) onOutage('spend_caps', err);
        if (limits.length) onOutage('rate_limits', err);
        // Open: the request goes on unchecked, and nothing is held for it (the guard does not retry).
        held.set(ex, { ...h, project: undefined, tokenLimits: [] });
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
      report(ex, [...(h.project?.rules ?? []), ...(primary?.rules ?? [])], caps, res);
      if (res.ok) {
        h.primary = primary;
        if (h.tokenLimits.length) ex.admittedTokens = est.tokens;
        if (limits.length) ex.rateLimitHeaders = rateLimitHeaders(limits, res.rates, undefined);
      } else if (res.kind === 'cap' && res.index < projectCaps.length) {
        const refusal = projectRefusal(h.project!, res);
        if (!cacheable) throw refusal;
        h.deferred = refusal;
        h.project = undefined;
      } else if (res.kind === 'cap' && primary) {
        // Only the primary slot is over its cap: it will be skipped; the project caps still reserve.
        h.primary = { skip: skipMessage(primary.rules[res.index - projectCaps.length]!, 'primary') };
        if (h.project) await reserveProject(ex, h, primarySlot, now);
      }
    }
    held.set(ex, h);
  }

  /** The project caps alone (after the primary's refusal, or for a job admitted elsewhere). */
  async function reserveProject(
    ex: Exchange,
    h: Held,
    slot: RuntimeSlot | undefined,
    now: number,
  ): Promise<void> {
    const hp = h.project!;
    let res: ReserveResult;
    try {
      res = await store.reserve({
        member: ex.id,
        amountMicros: hp.micros,
        deadlineMs: deadlineOf(slot, now),
        nowMs: now,
        rates: [],
        caps: hp.caps,
      });
    } catch (err) {
      h.project = undefined;
      onOutage('spend_caps', err);
      return;
    }
    report(ex, hp.rules, hp.caps, res);
    if (!res.ok && res.kind === 'cap') {
      h.project = undefined;
      throw projectRefusal(hp, res);
    }
  }

  function slotGuard(ex: Exchange, p: Prepared): SlotGuard | undefined {
    let h = held.get(ex);
    // The request is about to reach a provider: a project refusal kept for a possible cache hit applies now.
    if (h?.deferred) {
      drop(ex);
      throw h.deferred;
    }
    const outer = inner.slotGuard(ex, p);
    const pc = ex.auth.project.config;
    const wf = p.plan.workflow;
    const bySlot = wf ? capsOf(pc).slots.get(wf.config.name) : undefined;
    const projectRules = capsOf(pc).project;
    // No admission on this exchange (an async job, admitted when it was accepted): its caps are
    // reserved when the chain reaches its first slot.
    const lazyProject = !h && projectRules.length > 0;
    if (!bySlot && !lazyProject && !(ex.record.stream === true && h?.project)) return outer;
    if (!h) {
      h = { projectId: pc.id, project: undefined, primary: undefined, tokenLimits: [], tokens: 0 };
      held.set(ex, h);
    }
    try {
      return workflowGuard(ex, p, wf?.config.name ?? '', bySlot ?? new Map(), h, lazyProject);
    } catch (err) {
      drop(ex);
      throw err;
    }
  }

  function workflowGuard(
    ex: Exchange,
    p: Prepared,
    workflow: string,
    bySlot: Map<string, CapRule[]>,
    h: Held,
    lazyProject: boolean,
  ): SlotGuard {
    const project: RuntimeProject = ex.auth.project;
    const pc = project.config;
    const estimates = new Map<string, number>();
    const unpriced: SkippedAttempt[] = [];
    for (const slot of p.plan.slots) {
      if (!bySlot.has(slot.slot) && !(lazyProject && slot.position === 0)) continue;
      const e =
        slot.slot === 'primary' && h.primary && 'caps' in h.primary
          ? h.primary.micros
          : estimate(p.request, project, slot).micros;
      if (e === null && lazyProject && slot.position === 0)
        throw projectBudgetConfigError(slot.provider, slot.model);
      if (e === null)
        unpriced.push({
          provider: slot.provider,
          model: slot.model,
          status: 'skipped',
          reason: {
            message: `${slot.slot} is capped but model "${slot.model}" has no pricing for this request`,
          },
        });
      else estimates.set(slot.slot, e);
    }
    if (unpriced.length) throw workflowBudgetConfigError(workflow, unpriced);
    if (lazyProject) {
      const now = deps.now();
      const rules = capsOf(pc).project;
      h.project = {
        rules,
        caps: rules.map((r) => capRef(pc.id, r, now)),
        micros: estimates.get('primary') ?? 0,
      };
    }
    let projectPending = lazyProject;
    /** The slots whose caps hold a reservation of this request. */
    const reserved = new Map<string, HeldCaps>();
    if (h.primary && 'caps' in h.primary) reserved.set('primary', h.primary);
    const settleSlot = (slot: RuntimeSlot, actual: number): void => {
      const hc = reserved.get(slot.slot);
      if (!hc) return;
      reserved.delete(slot.slot);
      if (slot.slot === 'primary') h.primary = undefined;
      settle(ex, hc, actual);
    };
    return {
      async check(slot) {
        if (projectPending) {
          projectPending = false;
          await reserveProject(ex, h, slot, deps.now());
        }
        if (slot.slot === 'primary' && h.primary) {
          if ('skip' in h.primary) return { skip: true, message: h.primary.skip };
          return { skip: false };
        }
        const rules = bySlot.get(slot.slot);
        if (!rules) return { skip: false };
        const now = deps.now();
        const hc: HeldCaps = {
          rules,
          caps: rules.map((r) => capRef(pc.id, r, now)),
          micros: estimates.get(slot.slot)!,
        };
        let res: ReserveResult;
        try {
          res = await store.reserve({
            member: ex.id,
            amountMicros: hc.micros,
            deadlineMs: deadlineOf(slot, now),
            nowMs: now,
            rates: [],
            caps: hc.caps,
          });
        } catch (err) {
          onOutage('spend_caps', err);
          return { skip: false };
        }
        report(ex, rules, hc.caps, res);
        if (res.ok) {
          reserved.set(slot.slot, hc);
          return { skip: false };
        }
        return { skip: true, message: skipMessage(rules[res.kind === 'cap' ? res.index : 0]!, slot.slot) };
      },
      release(slot) {
        settleSlot(slot, 0);
      },
      commit(slot) {
        // describe.ts priced the answer at list price before the chain commits; unknown (a stream
        // stopped before its usage came) stays what was reserved.
        settleSlot(slot, ex.record.costMicros ?? reserved.get(slot.slot)?.micros ?? 0);
      },
      stream(slot) {
        const block = streamBlock(p.request, project, slot);
        const slotHeld = reserved.get(slot.slot);
        const projectHeld = h.project;
        if (!block || (!slotHeld && !projectHeld)) return undefined;
        const caps = [...(slotHeld?.caps ?? []), ...(projectHeld?.caps ?? [])];
        const budget: StreamBudget = {
          outputTokens: block.tokens,
          extend: async () => {
            const now = deps.now();
            try {
              // One call for the slot's and the project's caps: both grow, or neither.
              const res = await store.reserve({
                member: ex.id,
                amountMicros: block.micros,
                deadlineMs: deadlineOf(slot, now),
                nowMs: now,
                rates: [],
                caps,
              });
              if (!res.ok && res.kind === 'cap') {
                const slotCaps = slotHeld?.caps.length ?? 0;
                if (res.index < slotCaps) {
                  const c = slotHeld!.rules[res.index]!.config;
                  return {
                    ok: false,
                    code: 'workflow_budget_exceeded',
                    message: `The stream was stopped: spend cap ${c.id} (${c.period}, $${c.limitUsd}) on ${slot.slot} is reached.`,
                  };
                }
                const c = projectHeld!.rules[res.index - slotCaps]!.config;
                return {
                  ok: false,
                  code: 'project_budget_exceeded',
                  message: `The stream was stopped: the project's ${c.period} spend cap of $${c.limitUsd} is reached.`,
                };
              }
              if (slotHeld) slotHeld.micros += block.micros;
              if (projectHeld) projectHeld.micros += block.micros;
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

  function completed(ex: Exchange, p: Prepared, done: Completion): Durable {
    const durable = inner.completed(ex, p, done);
    const h = held.get(ex);
    if (!h && ex.admittedTokens === undefined) return durable;
    held.delete(ex);
    const fromCache = 'fromCache' in done && done.fromCache;
    if (h?.project) {
      const cost = ex.record.costMicros;
      settle(ex, h.project, fromCache ? 0 : cost === null ? h.project.micros : (cost ?? 0));
    }
    // A primary reserved at admission that the chain never reached (a cache hit) is given back.
    if (h?.primary && 'caps' in h.primary) settle(ex, h.primary, 0);
    // Token limits: those admission took on this exchange, or (an async job) on the accepting one.
    // An accepted async request keeps them until its job ends.
    const limits = h?.tokenLimits.length ? h.tokenLimits : acceptedLimits(ex);
    if (limits.length && !('queued' in done)) {
      const taken = h?.tokenLimits.length ? h.tokens : (ex.admittedTokens ?? 0);
      const real = fromCache ? 0 : (done.usage?.total_tokens ?? (done.ok ? taken : 0));
      settle(ex, undefined, 0, corrected(limits, real));
    }
    return durable;
  }

  /** A stage between admission and the chain that throws: what admission reserved goes back. */
  const releasing =
    <A extends unknown[], R>(fn: (ex: Exchange, ...rest: A) => Promise<R>) =>
    async (ex: Exchange, ...rest: A): Promise<R> => {
      try {
        return await fn(ex, ...rest);
      } catch (err) {
        drop(ex);
        throw err;
      }
    };

  return {
    ...inner,
    admit,
    cacheLookup: releasing(inner.cacheLookup),
    session: releasing(inner.session),
    slotGuard,
    completed,
  };
}
