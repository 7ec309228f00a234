import {
  type GatewayError,
  projectBudgetConfigError,
  projectBudgetExceeded,
  rateLimited,
} from '../errors/index.ts';
import { rateLimitHeaders } from '../limits/headers.ts';
import { limited, type RateLimit, requestLimits, usesTokens } from '../limits/rates.ts';
import type { Exchange } from '../pipeline/exchange.ts';
import type { Prepared } from '../pipeline/prepare.ts';
import { deadlineOf, type HeldCaps, reserve, type SpendContext, skipMessage } from './context.ts';
import { type Estimate, estimate } from './estimate.ts';
import { type CapRule, capRef, capsOf } from './rules.ts';

/** The primary slot as admission left it: nothing held, a reservation, or over its cap (skipped). */
export type PrimaryHold =
  | { kind: 'none' }
  | { kind: 'reserved'; held: HeldCaps }
  | { kind: 'skip'; message: string };

/** What admission took for one exchange. */
export interface Admitted {
  /** The project caps' reservation. */
  project: HeldCaps | undefined;
  primary: PrimaryHold;
  /** Token limits units were taken from, and how many. */
  tokenLimits: RateLimit[];
  tokens: number;
  /** A refusal that waits until the request is known to reach a provider (it may be answered without). */
  deferred: GatewayError | undefined;
  /** The `x-ratelimit-*` headers of the admitted request. */
  headers: Record<string, string> | undefined;
}

const NOTHING: PrimaryHold = { kind: 'none' };

export const projectRefusal = (h: HeldCaps, r: { index: number; spentMicros: number }): GatewayError => {
  const rule = h.rules[r.index]!;
  return projectBudgetExceeded({
    capId: rule.config.id,
    period: rule.config.period,
    limitMicros: rule.limitMicros,
    spentMicros: r.spentMicros,
    resetAt: h.caps[r.index]!.resetAt,
  });
};

const held = (projectId: string, rules: CapRule[], micros: number, now: number): HeldCaps => ({
  rules,
  caps: rules.map((r) => capRef(projectId, r, now)),
  micros,
});

/**
 * Admission, in ONE store call (one Redis round trip): the project's and the key's GCRA limits
 * (requests and async acceptances only: a job's units were taken when it was accepted; a summary
 * takes none), the project caps and the primary slot's caps. A refusal is thrown (429, 402, 422, or
 * 503 by outage policy), or deferred when a feature may answer without a provider (rule 2: a cache
 * hit passes a reached project cap). Undefined when nothing limits or caps the exchange.
 */
export async function admit(
  ctx: SpendContext,
  ex: Exchange,
  p: Prepared,
  providerOptional: boolean,
): Promise<Admitted | undefined> {
  const project = ex.auth.project;
  const pc = project.config;
  const key = ex.auth.key;
  const rates = ex.kind === 'request' || ex.kind === 'accept';
  const projectRules = capsOf(pc).project;
  const wf = p.plan.workflow;
  const primarySlot = p.plan.slots[0];
  // A request that may be answered without a provider reserves its slots only once it reaches one.
  const primaryRules =
    wf && !providerOptional ? capsOf(pc).slots.get(wf.config.name)?.get('primary') : undefined;
  const rateLimited_ = rates && (limited(pc.rateLimit) || limited(key.rateLimit));
  if (!projectRules.length && !primaryRules && !rateLimited_) return undefined;
  const now = ctx.now();
  const tokenRates = rates && (usesTokens(pc.rateLimit) || usesTokens(key.rateLimit));
  const est: Estimate =
    primarySlot && (projectRules.length || primaryRules || tokenRates)
      ? estimate(p.request, project, primarySlot)
      : { tokens: 0, micros: 0 };
  const limits = rates ? requestLimits(pc.id, pc.rateLimit, key.keyId, key.rateLimit, est.tokens) : [];
  const a: Admitted = {
    project: undefined,
    primary: NOTHING,
    tokenLimits: limits.filter((l) => l.kind === 'tokens'),
    tokens: est.tokens,
    deferred: undefined,
    headers: undefined,
  };
  if (projectRules.length) {
    if (est.micros === null) {
      // Rule 3: unknown pricing for the routed model blocks, once it is known to reach a provider.
      a.deferred = projectBudgetConfigError(primarySlot?.provider ?? '', primarySlot?.model ?? '');
      if (!providerOptional) throw a.deferred;
    } else a.project = held(pc.id, projectRules, est.micros, now);
  }
  // A capped primary without pricing is the slot guard's 422; nothing to reserve for it here.
  const primary =
    primaryRules && est.micros !== null ? held(pc.id, primaryRules, est.micros, now) : undefined;
  const projectCaps = a.project?.caps ?? [];
  const caps = primary ? [...projectCaps, ...primary.caps] : projectCaps;
  if (!limits.length && !caps.length) return a;
  const where = { id: pc.id, logCap: pc.requestLogs.maxEntries };
  const res = await reserve(
    ctx,
    ex.id,
    where,
    {
      member: ex.id,
      amountMicros: est.micros ?? 0,
      deadlineMs: deadlineOf(ctx, primarySlot, now),
      nowMs: now,
      rates: limits.map((l) => l.ref),
      caps,
    },
    [...(a.project?.rules ?? []), ...(primary?.rules ?? [])],
    [...(caps.length ? (['spend_caps'] as const) : []), ...(limits.length ? (['rate_limits'] as const) : [])],
  );
  if (!res) {
    // Open: the request goes on unchecked, and nothing is held for it.
    return { ...a, project: undefined, tokenLimits: [] };
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
  if (res.ok) {
    if (primary) a.primary = { kind: 'reserved', held: primary };
    if (limits.length) a.headers = rateLimitHeaders(limits, res.rates, undefined);
    return a;
  }
  if (res.index < projectCaps.length) {
    const refusal = projectRefusal(a.project!, res);
    if (!providerOptional) throw refusal;
    return { ...a, project: undefined, deferred: refusal };
  }
  // Only the primary slot is over its cap: it will be skipped; the project caps still reserve.
  a.primary = {
    kind: 'skip',
    message: skipMessage(primary!.rules[res.index - projectCaps.length]!, 'primary'),
  };
  if (a.project) a.project = await reserveProject(ctx, ex, a.project, primarySlot);
  return a;
}

/** The project caps alone, after the primary's refusal took the whole call down. */
async function reserveProject(
  ctx: SpendContext,
  ex: Exchange,
  hp: HeldCaps,
  slot: Prepared['plan']['slots'][number] | undefined,
): Promise<HeldCaps | undefined> {
  const pc = ex.auth.project.config;
  const now = ctx.now();
  const res = await reserve(
    ctx,
    ex.id,
    { id: pc.id, logCap: pc.requestLogs.maxEntries },
    {
      member: ex.id,
      amountMicros: hp.micros,
      deadlineMs: deadlineOf(ctx, slot, now),
      nowMs: now,
      rates: [],
      caps: hp.caps,
    },
    hp.rules,
    ['spend_caps'],
  );
  if (!res) return undefined;
  if (!res.ok && res.kind === 'cap') throw projectRefusal(hp, res);
  return hp;
}
