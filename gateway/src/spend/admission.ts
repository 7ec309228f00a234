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
import { type SpendContext, skipMessage, take } from './context.ts';
import { type Estimate, estimate } from './estimate.ts';
import type { CapHold, TokenHold } from './holding.ts';
import type { LeaseNeeds, RateLease, Taken } from './lease-types.ts';
import { type CapRule, capRef, capsOf } from './rules.ts';

/** The primary slot as admission left it: nothing held, a hold, or over its cap (skipped). */
export type PrimaryHold =
  | { kind: 'none' }
  | { kind: 'held'; hold: CapHold }
  | { kind: 'skip'; message: string };

/** What admission took for one exchange. */
export interface Admitted {
  /** The project caps' hold. */
  project: CapHold | undefined;
  primary: PrimaryHold;
  /** Token limits' units taken, to correct with the real usage. */
  tokens: TokenHold;
  /** Estimated tokens of the request (what token limits took). */
  estimatedTokens: number;
  /** A refusal that waits until the request is known to reach a provider (it may be answered without). */
  deferred: GatewayError | undefined;
  /** The `x-ratelimit-*` headers of the admitted request. */
  headers: Record<string, string> | undefined;
}

const NOTHING: PrimaryHold = { kind: 'none' };
const NO_LIMITS: RateLimit[] = [];
const CAPS_AND_LIMITS = ['spend_caps', 'rate_limits'] as const;
const CAPS = ['spend_caps'] as const;
const LIMITS = ['rate_limits'] as const;

function projectRefusal(h: CapHold, index: number, spentMicros: number): GatewayError {
  const rule = h.rules[index]!;
  return projectBudgetExceeded({
    capId: rule.config.id,
    period: rule.config.period,
    limitMicros: rule.limitMicros,
    spentMicros,
    resetAt: h.leases[index]!.ref.resetAt,
  });
}

/** A hold of `micros` on each cap of `rules` (their leases, in the current period). */
export function capHold(ctx: SpendContext, projectId: string, rules: CapRule[], micros: number): CapHold {
  const now = ctx.now();
  return { rules, leases: rules.map((r) => ctx.leases.cap(projectId, capRef(projectId, r, now), r)), micros };
}

/** What a hold asks of each of its leases. */
function needsOf(hold: CapHold | undefined, out: LeaseNeeds['caps']): void {
  if (hold) for (const lease of hold.leases) out.push({ lease, micros: hold.micros });
}

/** What admission asked of the leases, to decide on their answer. */
interface Asked {
  ctx: SpendContext;
  projectId: string;
  admitted: Admitted;
  limits: RateLimit[];
  rateLeases: RateLease[];
  primary: CapHold | undefined;
  providerOptional: boolean;
}

/**
 * Admission against the pod's leases, with no round trip while they last: the project's and the
 * key's GCRA limits (requests and async acceptances only: a job's units were taken when it was
 * accepted; a summary takes none), the project caps and the primary slot's caps. A refusal is thrown
 * (429, 402, 422, or 503 by outage policy), or deferred when a feature may answer without a provider
 * (a cache hit passes a reached project cap). Undefined when nothing limits or caps the exchange.
 * It answers at once when the leases have room, and with a promise when one had to be renewed.
 */
export function admit(
  ctx: SpendContext,
  ex: Exchange,
  p: Prepared,
  providerOptional: boolean,
): Admitted | undefined | Promise<Admitted | undefined> {
  const project = ex.auth.project;
  const pc = project.config;
  const key = ex.auth.key;
  const rates = ex.kind === 'request' || ex.kind === 'accept';
  const projectRules = capsOf(pc).project;
  const wf = p.plan.workflow;
  const primarySlot = p.plan.slots[0];
  // A request that may be answered without a provider holds its slots only once it reaches one.
  const primaryRules =
    wf && !providerOptional ? capsOf(pc).slots.get(wf.config.name)?.get('primary') : undefined;
  const rateLimited_ = rates && (limited(pc.rateLimit) || limited(key.rateLimit));
  if (!projectRules.length && !primaryRules && !rateLimited_) return undefined;
  const tokenRates = rates && (usesTokens(pc.rateLimit) || usesTokens(key.rateLimit));
  const est: Estimate =
    primarySlot && (projectRules.length || primaryRules || tokenRates)
      ? estimate(p.request, project, primarySlot)
      : { tokens: 0, micros: 0 };
  const limits = rates ? requestLimits(pc, key, est.tokens) : NO_LIMITS;
  // One pass over the limits: their leases, what the request takes of each, the token limits' share.
  const rateLeases: RateLease[] = new Array(limits.length);
  const rateNeeds: LeaseNeeds['rates'] = new Array(limits.length);
  const tokens: TokenHold = { leases: [], units: [] };
  for (let i = 0; i < limits.length; i++) {
    const l = limits[i]!;
    const lease = ctx.leases.rate(pc.id, l.ref);
    rateLeases[i] = lease;
    rateNeeds[i] = { lease, units: l.cost };
    if (l.kind === 'tokens') {
      tokens.leases.push(lease);
      tokens.units.push(l.cost);
    }
  }
  const a: Admitted = {
    project: undefined,
    primary: NOTHING,
    tokens,
    estimatedTokens: est.tokens,
    deferred: undefined,
    headers: undefined,
  };
  if (projectRules.length) {
    if (est.micros === null) {
      // Unknown pricing for the routed model blocks, once the request is known to reach a provider.
      a.deferred = projectBudgetConfigError(primarySlot?.provider ?? '', primarySlot?.model ?? '');
      if (!providerOptional) throw a.deferred;
    } else a.project = capHold(ctx, pc.id, projectRules, est.micros);
  }
  // A capped primary without pricing is the slot guard's 422; nothing to hold for it here.
  const primary =
    primaryRules && est.micros !== null ? capHold(ctx, pc.id, primaryRules, est.micros) : undefined;
  const capNeeds: LeaseNeeds['caps'] = [];
  needsOf(a.project, capNeeds);
  needsOf(primary, capNeeds);
  if (!limits.length && !capNeeds.length) return a;
  const taken = take(
    ctx,
    pc.id,
    { rates: rateNeeds, caps: capNeeds },
    capNeeds.length ? (limits.length ? CAPS_AND_LIMITS : CAPS) : LIMITS,
  );
  const asked: Asked = { ctx, projectId: pc.id, admitted: a, limits, rateLeases, primary, providerOptional };
  return taken instanceof Promise ? taken.then((t) => decide(asked, t)) : decide(asked, taken);
}

/** Admission on the leases' answer: admitted, or refused by a limit or a cap. */
function decide(q: Asked, taken: Taken | undefined): Admitted | Promise<Admitted> {
  const { ctx, admitted: a, limits, rateLeases, primary, providerOptional } = q;
  if (!taken) {
    // Open: the request goes on unchecked, and nothing is held for it.
    return { ...a, project: undefined, tokens: { leases: [], units: [] } };
  }
  const headers = (retryMs?: number) =>
    rateLimitHeaders(
      limits,
      rateLeases.map((l) => ctx.leases.view(l)),
      retryMs,
    );
  if (!taken.ok && taken.kind === 'rate') {
    const l: RateLimit = limits[taken.index]!;
    throw rateLimited(l.scope, l.kind, l.perMinute, taken.retryMs, headers(taken.retryMs));
  }
  if (limits.length) a.headers = headers();
  if (taken.ok) {
    if (primary) a.primary = { kind: 'held', hold: primary };
    return a;
  }
  const projectCaps = a.project?.leases.length ?? 0;
  if (taken.index < projectCaps) {
    const refusal = projectRefusal(a.project!, taken.index, taken.spentMicros);
    if (!providerOptional) throw refusal;
    return { ...a, project: undefined, deferred: refusal };
  }
  // Only the primary slot is over its cap: it will be skipped; the project caps still hold.
  a.primary = { kind: 'skip', message: skipMessage(primary!.rules[taken.index - projectCaps]!, 'primary') };
  if (!a.project) return a;
  return holdProject(ctx, q.projectId, a.project).then((project) => ({ ...a, project }));
}

/** The project caps alone, after the primary's refusal took the whole step down. */
async function holdProject(ctx: SpendContext, projectId: string, hp: CapHold): Promise<CapHold | undefined> {
  const caps: LeaseNeeds['caps'] = [];
  needsOf(hp, caps);
  const taken = await take(ctx, projectId, { rates: [], caps }, CAPS);
  if (!taken) return undefined;
  if (!taken.ok && taken.kind === 'cap') throw projectRefusal(hp, taken.index, taken.spentMicros);
  return hp;
}
