import type { RequestType } from '#contract';
import { replayHit, structuredOf } from '../cache/replay.ts';
import { type GatewayError, workflowBudgetExceeded } from '../errors/index.ts';
import type { ChatRequest, CompletionRequest } from '../providers/types.ts';
import type { NativeBody } from '../requests/native-schema.ts';
import type { Attempt } from '../routing/attempts.ts';
import { execute } from '../routing/execute.ts';
import { openStream } from '../routing/stream.ts';
import {
  canonicalUsage,
  describeFailure,
  describePrepared,
  describeResult,
  describeStreamStart,
} from './describe.ts';
import type { Exchange } from './exchange.ts';
import type { Outcome } from './outcome.ts';
import { type Prepared, prepare } from './prepare.ts';
import type { PipelineStages } from './stages.ts';
import { followStream } from './stream.ts';

export interface PipelineRequest {
  body: NativeBody;
  /** `sync` answers in the response, `stream` as SSE, `async` as a job result. */
  mode: 'sync' | 'stream' | 'async';
  /** Compatible surface: `model` names a workflow of one of these request types. */
  compat?: { allowed: readonly RequestType[] } | undefined;
}

/**
 * The request pipeline (DESIGN.md "One request pipeline"), the same for every surface:
 *
 *   authenticate (app.ts onRequest) → parse (the surface) → prepare → admit → cache lookup
 *   → session → failover chain → [encode (the surface)] → settle (pipeline/settle.ts, at response end)
 *
 * Errors before the chain are GatewayErrors (the surface's error encoder answers them); a failed
 * chain is an outcome, not an exception, because the native surface answers it with HTTP 200.
 */
export async function runPipeline(
  stages: PipelineStages,
  ex: Exchange,
  req: PipelineRequest,
): Promise<Outcome> {
  const p = prepare(ex.auth, req.body, { compat: req.compat, async: req.mode === 'async' });
  describePrepared(ex.record, p, req.mode === 'stream');
  // Bodies reach the request log only for projects that ask for them (Project spec.requestLogs.bodies).
  if (ex.auth.project.config.requestLogs.bodies) ex.record.bodies = { request: req.body, response: null };
  await stages.admit(ex, p);
  const cached = await stages.cacheLookup(ex, p);
  if (cached) {
    describeResult(ex.record, p, undefined, cached, []);
    stages.completed(ex, p, { ok: true, result: cached, usage: canonicalUsage(cached), fromCache: true });
    if (req.mode === 'stream')
      return { kind: 'streaming', prepared: p, slot: undefined, events: replayHit(ex, cached) };
    return {
      kind: 'answered',
      prepared: p,
      result: cached,
      slot: undefined,
      structured: structuredOf(p, cached),
    };
  }
  await stages.session(ex, p, req.body.session_id);
  const guard = stages.slotGuard(ex, p);
  if (guard) p.plan.guard = guard;
  return req.mode === 'stream' ? stream(stages, ex, p) : answer(stages, ex, p);
}

/**
 * The synchronous half of an async request (POST /v1/ai/async): prepare and admit, so refusals
 * (4xx, 402, 429) answer at once; the job later runs runPipeline with admission already done.
 */
export async function admitAsync(
  stages: PipelineStages,
  ex: Exchange,
  req: PipelineRequest,
): Promise<Prepared> {
  const p = prepare(ex.auth, req.body, { compat: req.compat, async: true });
  describePrepared(ex.record, p, false);
  await stages.admit(ex, p);
  // Session workflows: the session is checked (422/400 now, not in the job) or started, so the
  // acknowledgement carries its id (ex.record.sessionId) and the job continues it.
  await stages.session(ex, p, req.body.session_id);
  // Nothing is answered on this exchange: stages give back the spend reservations (the job runs on
  // its own exchange and reserves for itself); the rate units taken stand until the job ends.
  stages.completed(ex, p, { ok: false, usage: undefined, queued: true });
  return p;
}

async function answer(stages: PipelineStages, ex: Exchange, p: Prepared): Promise<Outcome> {
  const outcome = await execute(p.plan, p.request, ex.signal);
  if (!outcome.ok) {
    if (outcome.refusal) throw refused(stages, ex, p, outcome.refusal, outcome.attempts);
    describeFailure(ex.record, outcome.error, outcome.attempts);
    stages.completed(ex, p, { ok: false, usage: undefined });
    if (outcome.allSkipped) throw everySlotOverCap(ex, p, outcome.attempts);
    return { kind: 'failed', prepared: p, error: outcome.error };
  }
  describeResult(ex.record, p, outcome.slot, outcome.result, outcome.attempts);
  const usage = canonicalUsage(outcome.result);
  p.plan.guard?.commit(outcome.slot, usage);
  const durable = stages.completed(ex, p, { ok: true, result: outcome.result, usage, fromCache: false });
  if (durable) await durable;
  return {
    kind: 'answered',
    prepared: p,
    result: outcome.result,
    slot: outcome.slot,
    structured: outcome.structured,
  };
}

async function stream(stages: PipelineStages, ex: Exchange, p: Prepared): Promise<Outcome> {
  const opened = await openStream(p.plan, p.request as ChatRequest | CompletionRequest, ex.signal);
  if (!opened.ok) {
    if (opened.refusal) throw refused(stages, ex, p, opened.refusal, opened.attempts);
    describeFailure(ex.record, opened.error, opened.attempts);
    stages.completed(ex, p, { ok: false, usage: undefined });
    if (opened.allSkipped) throw everySlotOverCap(ex, p, opened.attempts);
    return { kind: 'failed', prepared: p, error: opened.error };
  }
  // Before the encoder writes headers: they name the slot that answered.
  describeStreamStart(ex.record, opened.slot, opened.attempts);
  return { kind: 'streaming', prepared: p, slot: opened.slot, events: followStream(stages, ex, p, opened) };
}

/**
 * The chain stopped on a refusal or on the gateway's own failure (not the provider's): what the
 * stages hold is given back, and the error is answered by the surface's error encoder.
 */
function refused(
  stages: PipelineStages,
  ex: Exchange,
  p: Prepared,
  err: GatewayError,
  attempts: Attempt[],
): GatewayError {
  ex.record.attempts = attempts;
  stages.completed(ex, p, { ok: false, usage: undefined });
  return err;
}

/**
 * Only the slot guard skips slots, so a chain that called no provider is one whose every slot is
 * over its spend cap: 402 workflow_budget_exceeded with the skipped attempts (a refusal, which the
 * error encoder records, not a provider failure).
 */
function everySlotOverCap(ex: Exchange, p: Prepared, attempts: Attempt[]): GatewayError {
  delete ex.record.outcome;
  delete ex.record.errorCode;
  return workflowBudgetExceeded(
    p.workflowName ?? p.requestedModel,
    attempts.map((a) => ({
      provider: a.provider,
      model: a.model,
      status: 'skipped' as const,
      reason: { message: a.reason?.message ?? '' },
    })),
  );
}
