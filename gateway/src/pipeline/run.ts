import type { RequestType } from '#contract';
import type { ChatRequest, CompletionRequest } from '../providers/types.ts';
import type { NativeBody } from '../requests/native-schema.ts';
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
    return { kind: 'answered', prepared: p, result: cached, slot: undefined, structured: undefined };
  }
  await stages.session(ex, p, req.body.session_id);
  const guard = stages.slotGuard(ex, p);
  if (guard) p.plan.guard = guard;
  return req.mode === 'stream' ? stream(stages, ex, p) : answer(stages, ex, p);
}

async function answer(stages: PipelineStages, ex: Exchange, p: Prepared): Promise<Outcome> {
  const outcome = await execute(p.plan, p.request, ex.signal);
  if (!outcome.ok) {
    describeFailure(ex.record, outcome.error, outcome.attempts);
    stages.completed(ex, p, { ok: false, usage: undefined });
    return { kind: 'failed', prepared: p, error: outcome.error };
  }
  describeResult(ex.record, p, outcome.slot, outcome.result, outcome.attempts);
  const usage = canonicalUsage(outcome.result);
  p.plan.guard?.commit(outcome.slot, usage);
  stages.completed(ex, p, { ok: true, result: outcome.result, usage, fromCache: false });
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
    describeFailure(ex.record, opened.error, opened.attempts);
    stages.completed(ex, p, { ok: false, usage: undefined });
    return { kind: 'failed', prepared: p, error: opened.error };
  }
  // Before the encoder writes headers: they name the slot that answered.
  describeStreamStart(ex.record, opened.slot, opened.attempts);
  return { kind: 'streaming', prepared: p, slot: opened.slot, events: followStream(stages, ex, p, opened) };
}
