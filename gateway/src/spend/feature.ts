import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import { limited, requestLimits } from '../limits/rates.ts';
import type { Exchange } from '../pipeline/exchange.ts';
import type { Feature, FeatureRun, RunEnd } from '../pipeline/feature.ts';
import type { Prepared } from '../pipeline/prepare.ts';
import type { Notes } from '../pipeline/result.ts';
import { createOutageMetrics, type OutagePolicy, outagePolicyFromEnv } from '../state/failure-policy.ts';
import { type Admitted, admit } from './admission.ts';
import type { SpendContext } from './context.ts';
import { correct, release, type TokenHold } from './holding.ts';
import { Leases } from './leases.ts';
import { type CapRule, capsOf } from './rules.ts';
import { type SlotHolds, slotGuard, streamBudget } from './slot-guard.ts';
import type { GuardStore } from './store.ts';
import { CapReporter, type ThresholdSink } from './thresholds.ts';
import { admitTool, type ToolAdmit, type ToolHold } from './tool-admission.ts';

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
   * How long a pod's leases outlive its last call to the store (default 15 s,
   * SWITCHYARD_SPEND_LEASE_TTL_MS): after it, a killed pod's commitments count as spent and the
   * rest of its leases return.
   */
  leaseTtlMs?: number;
  /** This pod, as the store knows it; default: host name, process id and a random part. */
  member?: string;
}

/** The limits-and-caps feature, and the leases shutdown gives back. */
export interface LimitsAndCaps extends Feature {
  /** An MCP tool call through the same leases (tool-admission.ts); throws ToolRefusal. */
  admitTool(t: ToolAdmit): ToolHold | Promise<ToolHold>;
  close(): Promise<void>;
}

/** Read only: what an exchange that carries no token units corrects. */
const NO_TOKENS: TokenHold = { leases: [], units: [] };

const envTtl = (): number => {
  const v = Number(process.env.SWITCHYARD_SPEND_LEASE_TTL_MS);
  return Number.isFinite(v) && v >= 300 ? v : 15_000;
};

/** An async job's token units, taken on the exchange that accepted it: what its real usage corrects. */
function carriedTokens(ctx: SpendContext, ex: Exchange): TokenHold {
  const tokens = ex.carried?.admittedTokens;
  if (tokens === undefined) return NO_TOKENS;
  const { project, key } = ex.auth;
  const limits = requestLimits(project.config, key, tokens).filter((l) => l.kind === 'tokens');
  return {
    leases: limits.map((l) => ctx.leases.rate(project.config.id, l.ref)),
    units: limits.map((l) => l.cost),
  };
}

/**
 * Rate limits and spend caps. One exchange's whole lifecycle is `run` below:
 * - begin: admission (admission.ts) against this pod's leases (leases.ts) on the project's and
 *   key's limits, the project caps and the primary slot's caps; the store is called only when a
 *   lease runs short; refusals are 429 / 402 / 422, an outage 503 or open by policy;
 * - toChain: a refusal kept for a possible cache hit applies; the slot guard (slot-guard.ts) holds
 *   each further capped slot as the chain reaches it, and extends a stream's holds;
 * - finish: every hold leaves its lease with the real cost (or 0: given back) and token limits are
 *   corrected with the real usage; the leases report it with the next call, in one batch.
 */
export function limitsAndCaps(deps: LimitsAndCapsDeps): LimitsAndCaps {
  const reporter = new CapReporter(deps.registry, deps.thresholds, deps.now);
  // Per call, not per request: admission itself makes none while the leases have room.
  const leaseCalls = new Counter({
    name: 'switchyard_spend_lease_calls_total',
    help: 'Lease calls to Redis for spend caps and rate limits: renewal (a request waited for it) or report, by outcome.',
    labelNames: ['kind', 'outcome'] as const,
    registers: [deps.registry],
  });
  // Zero from the start, so a rate over them reads 0 rather than nothing before the first call.
  for (const kind of ['renewal', 'report'] as const)
    for (const outcome of ['ok', 'error'] as const) leaseCalls.inc({ kind, outcome }, 0);
  const leases = new Leases({
    store: deps.store,
    member: deps.member ?? `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`,
    now: deps.now,
    logger: deps.logger,
    ttlMs: deps.leaseTtlMs ?? envTtl(),
    onAnswer: (projectId, caps, result) => reporter.answered(projectId, caps, result),
    onCall: (kind, ok) => leaseCalls.inc({ kind, outcome: ok ? 'ok' : 'error' }),
  });
  // Read at scrape time: money this pod's running requests hold, at no cost per request.
  new Gauge({
    name: 'switchyard_spend_in_flight_usd',
    help: "Estimated cost of this gateway's requests in flight, per SpendCap (USD, at list price).",
    labelNames: ['project', 'cap'] as const,
    registers: [deps.registry],
    collect() {
      this.reset();
      for (const l of leases.caps())
        this.set({ project: l.projectId, cap: l.rule.config.id }, l.inflight / 1_000_000);
    },
  });
  const ctx: SpendContext = {
    leases,
    store: deps.store,
    policy: deps.policy ?? outagePolicyFromEnv(),
    outage: createOutageMetrics(deps.registry, { now: deps.now }),
    reporter,
    logger: deps.logger,
    now: deps.now,
  };

  // Admission answers at once while the leases have room; so does the run then (no promise).
  function run(
    ex: Exchange,
    p: Prepared,
    providerOptional: boolean,
    bySlot: Map<string, CapRule[]> | undefined,
  ): FeatureRun | undefined | Promise<FeatureRun | undefined> {
    const a = admit(ctx, ex, p, providerOptional);
    return a instanceof Promise ? a.then((v) => admitted(ex, v, bySlot)) : admitted(ex, a, bySlot);
  }

  function admitted(
    ex: Exchange,
    a: Admitted | undefined,
    bySlot: Map<string, CapRule[]> | undefined,
  ): FeatureRun | undefined {
    const carried = ex.kind === 'job' ? carriedTokens(ctx, ex) : NO_TOKENS;
    if (!a && !bySlot && !carried.leases.length) return undefined;
    const tokens = a?.tokens.leases.length ? a.tokens : carried;
    const taken = a?.tokens.leases.length ? a.estimatedTokens : (ex.carried?.admittedTokens ?? 0);
    const holds: SlotHolds = { slots: new Map(), project: a?.project };
    if (a?.primary.kind === 'held') holds.slots.set('primary', a.primary.hold);
    const releaseAll = (actual: (slot: string) => number, projectCost: number): void => {
      release(leases, holds.project, projectCost, ex.id);
      for (const [name, h] of holds.slots) release(leases, h, actual(name), ex.id);
      holds.project = undefined;
      holds.slots.clear();
    };

    const notes: Notes = {};
    if (a?.headers) notes.rateLimitHeaders = a.headers;
    if (ex.kind === 'accept' && a?.tokens.leases.length)
      notes.carried = { admittedTokens: a.estimatedTokens };
    return {
      notes,
      toChain(final) {
        // The request reaches a provider: a refusal kept for a possible cache hit applies now.
        if (a?.deferred) throw a.deferred;
        if (bySlot) return slotGuard(ctx, ex, final, bySlot, a?.primary ?? { kind: 'none' }, holds);
        // Project caps alone: only a stream can outgrow what admission took.
        return holds.project ? { stream: (slot) => streamBudget(ctx, ex, final, slot, holds) } : undefined;
      },
      finish(end: RunEnd) {
        if (end.kind === 'refused') {
          releaseAll(() => 0, 0);
          correct(leases, tokens, 0);
          return undefined;
        }
        if (end.kind === 'queued') {
          // The job holds for itself; the rate units taken stand until it ends and corrects them.
          releaseAll(() => 0, 0);
          return undefined;
        }
        const answered = end.kind === 'answered';
        const slot = answered ? end.answer.slot : end.failure.slot;
        const cost = answered ? end.answer.costMicros : end.failure.costMicros;
        const usage = answered ? end.answer.usage : end.failure.usage;
        // Unknown cost (unpriced, or a stream without usage) stays what was held.
        const projectCost = cost ?? holds.project?.micros ?? 0;
        releaseAll(
          (name) => (slot?.slot === name ? (cost ?? holds.slots.get(name)!.micros) : 0),
          projectCost,
        );
        // Token limits: an answer without a provider used none; one without reported usage counts as estimated.
        correct(leases, tokens, answered && !slot ? 0 : (usage?.total_tokens ?? (answered ? taken : 0)));
        return undefined;
      },
    };
  }

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
    admitTool: (t) => admitTool(ctx, t),
    close: () => leases.close(),
  };
}
