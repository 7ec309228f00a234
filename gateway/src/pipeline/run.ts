import type { Logger } from 'pino';
import type { RequestType } from '#contract';
import { answerCost } from '../domain/cost.ts';
import { reportedUsage } from '../domain/usage.ts';
import { GatewayError, workflowBudgetExceeded } from '../errors/index.ts';
import type { CanonicalResult, ChatRequest, CompletionRequest, NativeRequest } from '../providers/types.ts';
import type { NativeBody } from '../requests/native-schema.ts';
import type { Attempt } from '../routing/attempts.ts';
import { execute, structuredValue } from '../routing/execute.ts';
import type { ExecutionPlan } from '../routing/plan.ts';
import { openStream } from '../routing/stream.ts';
import type { UpstreamError } from '../upstream/errors.ts';
import type { Exchange } from './exchange.ts';
import type { Feature } from './feature.ts';
import { type Prepared, prepare } from './prepare.ts';
import type { Answer, Failure, FinishedResult, Notes, PipelineResult, Refused } from './result.ts';
import { Runs } from './runs.ts';
import { followStream, replayStream } from './stream.ts';

export interface PipelineRequest {
  body: NativeBody;
  /** Answer as a stream of events (SSE) rather than at once. */
  stream: boolean;
  /** Compatible surface: `model` names a workflow of one of these request types. */
  compat?: { allowed: readonly RequestType[] } | undefined;
  /** The body as the client wrote it in a provider's API, for the adapter that speaks it (chat only). */
  native?: NativeRequest | undefined;
  /** The console's backend-pipeline simulation: an `eventName` workflow's AI step runs at once. */
  pipelineSimulation?: boolean | undefined;
  /** The console's compare: only this slot of the workflow runs (see PrepareOptions.pinSlot). */
  pinSlot?: number | undefined;
}

/** An async request's admission: accepted (its job runs later) or refused at once. */
export type Acceptance = { kind: 'accepted'; prepared: Prepared; notes: Notes } | Refused;

/**
 * The request pipeline, the same for every surface, job and internal call:
 *
 *   prepare → features begin (in their declared order: limits and caps, cache, sessions)
 *   → [an answer from a feature, or: gate → failover chain] → features finish → result
 *
 * Surfaces parse before it and encode its result; the transport settles the exchange after the
 * answer (settle.ts). Refusals (GatewayErrors) are results, not exceptions: a surface throws them to
 * its error encoder. A failed chain is a result too, because the native surface answers it with 200.
 */
export class Pipeline {
  readonly #features: readonly Feature[];
  readonly #logger: Logger;

  constructor(features: readonly Feature[], logger: Logger) {
    this.#features = features;
    this.#logger = logger;
  }

  /** A request answered at once or as a stream, or an async job. */
  async run(ex: Exchange, req: PipelineRequest): Promise<PipelineResult> {
    ex.progress.stream = req.stream;
    const p = this.#prepare(ex, req, ex.kind === 'job');
    if (!('plan' in p)) return p;
    return this.#serve(ex, p, req.stream);
  }

  /** POST /v1/ai/async: prepared and admitted now, so refusals answer at once; the job runs later. */
  async accept(ex: Exchange, req: PipelineRequest): Promise<Acceptance> {
    const p = this.#prepare(ex, req, true);
    if (!('plan' in p)) return p;
    let runs: Runs;
    try {
      runs = await Runs.begin(this.#features, ex, p, this.#logger);
    } catch (err) {
      return this.#refused(ex, p, err);
    }
    // As in #serve: what was settled is the request as the features rewrote it (guardrails masked).
    ex.progress.prepared = runs.prepared;
    void runs.finish({ kind: 'queued' });
    return { kind: 'accepted', prepared: runs.prepared, notes: runs.notes };
  }

  /** A call of our own on a prepared request (a session summary): the features and the chain. */
  async call(ex: Exchange, p: Prepared): Promise<FinishedResult> {
    ex.progress.prepared = p;
    const r = await this.#serve(ex, p, false);
    if (r.kind === 'streaming') throw new Error('an internal call produced a stream');
    return r;
  }

  #prepare(ex: Exchange, req: PipelineRequest, async: boolean): Prepared | Refused {
    try {
      const p = prepare(ex.auth, req.body, {
        compat: req.compat,
        async: async || req.pipelineSimulation === true,
        native: req.native,
        pinSlot: req.pinSlot,
      });
      ex.progress.prepared = p;
      return p;
    } catch (err) {
      return this.#refused(ex, undefined, err);
    }
  }

  async #serve(ex: Exchange, prepared: Prepared, stream: boolean): Promise<PipelineResult> {
    let runs: Runs;
    try {
      runs = await Runs.begin(this.#features, ex, prepared, this.#logger);
    } catch (err) {
      return this.#refused(ex, prepared, err);
    }
    const p = runs.prepared;
    ex.progress.prepared = p;
    const given = runs.answer;
    if (given) return this.#answered(ex, runs, p, given, stream);
    let plan: ExecutionPlan;
    try {
      plan = { ...p.plan, guard: runs.toChain(p) };
    } catch (err) {
      runs.finishRefused(err);
      return this.#refused(ex, p, err);
    }
    try {
      return stream ? await this.#stream(ex, runs, p, plan) : await this.#call(ex, runs, p, plan);
    } catch (err) {
      // A guard refused where the chain starts (a cap without pricing, an outage policy), or a bug.
      runs.finishRefused(err);
      return this.#refused(ex, p, err);
    }
  }

  /** An answer a feature gave (a cache hit): no provider, no cost; a stream replays it. */
  async #answered(
    ex: Exchange,
    runs: Runs,
    p: Prepared,
    result: CanonicalResult,
    stream: boolean,
  ): Promise<PipelineResult> {
    let reviewed = result;
    if (runs.reviews)
      try {
        reviewed = await runs.review(result);
      } catch (err) {
        runs.finishRefused(err);
        return this.#refused(ex, p, err);
      }
    const answer: Answer = {
      slot: undefined,
      attempts: [],
      result: reviewed,
      usage: reportedUsage(result),
      costMicros: 0,
      structured: structuredValue(p.plan, reviewed),
    };
    const durable = runs.finish({ kind: 'answered', answer });
    if (durable) await durable;
    if (stream) {
      const { events, ended } = replayStream(ex, answer);
      return this.#done(ex, {
        kind: 'streaming',
        prepared: p,
        notes: runs.notes,
        slot: undefined,
        attempts: [],
        events,
        ended,
      });
    }
    return this.#done(ex, { kind: 'answered', prepared: p, notes: runs.notes, answer });
  }

  async #call(ex: Exchange, runs: Runs, p: Prepared, plan: ExecutionPlan): Promise<PipelineResult> {
    const outcome = await execute(
      plan,
      p.request,
      ex.signal,
      ex.trace.chain(p, ex.auth.project.config.id, false),
    );
    if (!outcome.ok) return this.#chainFailed(ex, runs, p, outcome);
    const usage = reportedUsage(outcome.result);
    const costMicros = answerCost(plan, outcome.slot, usage, outcome.result);
    let result = outcome.result;
    if (runs.reviews)
      try {
        result = await runs.review(result);
      } catch (err) {
        if (!(err instanceof GatewayError)) throw err;
        // Refused after the provider answered: what the answer cost still counts.
        const failure: Failure = {
          slot: outcome.slot,
          attempts: outcome.attempts,
          code: err.code,
          message: err.message,
          providerMessage: err.message,
          httpStatus: err.status,
          upstreamStatus: undefined,
          usage,
          costMicros,
          aborted: false,
        };
        void runs.finish({ kind: 'failed', failure });
        return this.#done(ex, {
          kind: 'refused',
          prepared: p,
          notes: runs.notes,
          error: err,
          attempts: outcome.attempts,
        });
      }
    const answer: Answer = {
      slot: outcome.slot,
      attempts: outcome.attempts,
      result,
      usage,
      costMicros,
      // A masked answer's structured value is read again from the masked text.
      structured: result === outcome.result ? outcome.structured : structuredValue(plan, result),
    };
    const durable = runs.finish({ kind: 'answered', answer });
    if (durable) await durable;
    return this.#done(ex, { kind: 'answered', prepared: p, notes: runs.notes, answer });
  }

  async #stream(ex: Exchange, runs: Runs, p: Prepared, plan: ExecutionPlan): Promise<PipelineResult> {
    const opened = await openStream(
      plan,
      p.request as ChatRequest | CompletionRequest,
      ex.signal,
      ex.trace.chain(p, ex.auth.project.config.id, true),
    );
    if (!opened.ok) return this.#chainFailed(ex, runs, p, opened);
    const { events, ended } = followStream(ex, runs, { ...p, plan }, runs.reviewStream(opened));
    return this.#done(ex, {
      kind: 'streaming',
      prepared: p,
      notes: runs.notes,
      slot: opened.slot,
      attempts: opened.attempts,
      events,
      ended,
    });
  }

  /**
   * Every slot failed, or none could be called. Only a slot guard skips slots, so a chain that
   * called no provider is one whose every slot is over its spend cap: 402 workflow_budget_exceeded
   * with the skipped attempts (a refusal, not a provider failure).
   */
  #chainFailed(
    ex: Exchange,
    runs: Runs,
    p: Prepared,
    outcome: { error: UpstreamError; attempts: Attempt[]; allSkipped: boolean; refusal?: GatewayError },
  ): PipelineResult {
    if (outcome.refusal) {
      // Not the provider's failure: a refusal found inside an attempt, or the gateway's own error.
      const error = outcome.refusal;
      void runs.finish({ kind: 'refused', error });
      return this.#done(ex, {
        kind: 'refused',
        prepared: p,
        notes: runs.notes,
        error,
        attempts: outcome.attempts,
      });
    }
    if (outcome.allSkipped) {
      const error = workflowBudgetExceeded(
        p.workflowName ?? p.requestedModel,
        outcome.attempts.map((a) => ({
          provider: a.provider,
          model: a.model,
          status: 'skipped' as const,
          reason: { message: a.reason?.message ?? '' },
        })),
      );
      void runs.finish({ kind: 'refused', error });
      return this.#done(ex, {
        kind: 'refused',
        prepared: p,
        notes: runs.notes,
        error,
        attempts: outcome.attempts,
      });
    }
    const e = outcome.error;
    const failure: Failure = {
      slot: undefined,
      attempts: outcome.attempts,
      code: e.code,
      message: e.message,
      providerMessage: e.providerMessage || e.message,
      httpStatus: e.httpStatus,
      upstreamStatus: e.status,
      usage: undefined,
      costMicros: 0,
      aborted: ex.signal.aborted,
    };
    void runs.finish({ kind: 'failed', failure });
    return this.#done(ex, { kind: 'failed', prepared: p, notes: runs.notes, failure });
  }

  #refused(ex: Exchange, prepared: Prepared | undefined, err: unknown): Refused {
    // Not a refusal: a failure of ours, which the surface's error encoder answers as 503.
    if (!(err instanceof GatewayError)) throw err;
    return this.#done(ex, { kind: 'refused', prepared, notes: ex.progress.notes, error: err });
  }

  #done<R extends PipelineResult>(ex: Exchange, result: R): R {
    ex.progress.result = result;
    return result;
  }
}
