import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { microsToUsd } from '#contract';
import { GatewayError, workflowBudgetExceeded } from '../errors/index.ts';
import type { RequestOutcome } from '../observability/request-record.ts';
import { costMicros } from '../pipeline/cost.ts';
import type { ChatRequest, Usage } from '../providers/types.ts';
import type { Attempt } from '../routing/attempts.ts';
import { execute } from '../routing/execute.ts';
import type { RuntimeSlot, RuntimeWorkflow } from '../snapshot/runtime.ts';
import { eventEntry } from '../state/event-entry.ts';
import type { RuntimeState } from '../state/types.ts';
import { countMessageTokens, countTextTokens } from '../tokens/count.ts';
import { messageText, planFold, SUMMARY_PREFIX, sessionTokens } from './compose.ts';
import type { SessionMetrics } from './metrics.ts';
import type { OpenSummarySpend, SummarySpend } from './summary-spend.ts';
import type { SessionRef, SessionStore, Turn } from './types.ts';

export interface SummarizeDeps {
  store: SessionStore;
  state: RuntimeState;
  metrics: SessionMetrics;
  logger: Logger;
  now: () => number;
}

export interface SummarizeJob {
  ref: SessionRef;
  workflow: RuntimeWorkflow;
  logCap: number;
  keyId: string | null;
  /** The summary call's spend caps (it counts toward them like any request); none when unwired. */
  spend: OpenSummarySpend | undefined;
  /** The request whose answer pushed the session past its threshold. */
  triggeredBy: string;
}

const INSTRUCTIONS =
  'You keep the running summary of a conversation between a user and an assistant. Rewrite the ' +
  'summary so that it also covers the new turns: keep names, facts, numbers, decisions, ' +
  'preferences and open questions; drop small talk. Answer with the summary text only.';

const clip = (s: string, n: number): string => (s.length <= n ? s : `${s.slice(0, n - 1)}…`);

/** The summary call: the workflow's own model, through its failover chain. */
export function summaryRequest(previous: string, folded: readonly Turn[], threshold: number): ChatRequest {
  // Each turn is clipped, so one huge message cannot push the summary call past the model's context.
  const lines = folded.map((t) => `${t.message.role}: ${clip(messageText(t.message), 4000)}`).join('\n');
  return {
    kind: 'chat',
    messages: [
      { role: 'system', content: INSTRUCTIONS },
      { role: 'user', content: `${previous ? `Summary so far:\n${previous}\n\n` : ''}New turns:\n${lines}` },
    ],
    max_tokens: Math.min(4096, Math.max(64, Math.floor(threshold / 2))),
  };
}

/** Test mode: a deterministic summary (the earlier summary plus one clipped line per folded turn), bounded. */
export function testModeSummary(previous: string, folded: readonly Turn[], threshold: number): string {
  const lines = [
    ...(previous ? previous.split('\n') : []),
    ...folded.map((t) => `${t.message.role}: ${clip(messageText(t.message).replace(/\s+/g, ' '), 80)}`),
  ];
  // About half the threshold at 4 characters a token: the newest whole lines survive.
  const max = threshold * 2;
  let size = lines.reduce((n, l) => n + l.length + 1, 0);
  while (lines.length > 1 && size > max) size -= lines.shift()!.length + 1;
  return lines.join('\n');
}

interface Summarised {
  ok: boolean;
  summary: string;
  usage: Usage | undefined;
  /** Integer micro-USD at list price; null when unpriced; 0 in test mode or when nothing answered. */
  cost: number | null;
  slot: RuntimeSlot | undefined;
  attempts: Attempt[];
  outcome: RequestOutcome;
  errorCode: string | null;
  httpStatus: number;
  message: string | null;
}

function failed(
  attempts: Attempt[],
  outcome: RequestOutcome,
  e: { code: string; httpStatus: number; message: string },
): Summarised {
  return {
    ok: false,
    summary: '',
    usage: undefined,
    cost: 0,
    slot: undefined,
    attempts,
    outcome,
    errorCode: e.code,
    httpStatus: e.httpStatus,
    message: e.message,
  };
}

/** A cap's refusal, as describe.ts records one for a request. */
const refused = (err: GatewayError, attempts: Attempt[]): Summarised =>
  failed(
    attempts,
    err.status >= 500 ? 'unavailable' : err.status === 402 ? 'budget_exceeded' : 'client_error',
    { code: err.code, httpStatus: err.status, message: err.message },
  );

async function callModel(
  job: SummarizeJob,
  id: string,
  req: ChatRequest,
  previous: string,
  folded: Turn[],
): Promise<Summarised> {
  const wf = job.workflow;
  const threshold = wf.config.sessionMemory.summarizeAtTokens;
  const primary = wf.slots[0]!;
  if (wf.config.testMode) {
    // Nothing reaches a provider and nothing is spent: caps are not consulted.
    const summary = testModeSummary(previous, folded, threshold);
    const prompt = countMessageTokens(req.messages, primary.target.type);
    const completion = countTextTokens(summary, primary.target.type);
    return {
      ok: true,
      summary,
      usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion },
      cost: 0,
      slot: primary,
      attempts: [{ provider: primary.provider, model: primary.model, status: 'success' as const }],
      outcome: 'success',
      errorCode: null,
      httpStatus: 200,
      message: null,
    };
  }
  let spend: SummarySpend | undefined;
  try {
    spend = job.spend?.(id, req);
    const outcome = await execute(
      {
        workflow: wf,
        requestType: 'chat',
        slots: wf.slots,
        testMode: false,
        structured: undefined,
        json: false,
        guard: spend?.guard,
      },
      req,
      AbortSignal.timeout(120_000),
    );
    if (!outcome.ok) {
      spend?.failed();
      // Only the slot guard skips slots: every slot is over its spend cap (the 402 a request gets).
      if (outcome.allSkipped)
        return refused(
          workflowBudgetExceeded(
            wf.config.name,
            outcome.attempts.map((a) => ({
              provider: a.provider,
              model: a.model,
              status: 'skipped' as const,
              reason: { message: a.reason?.message ?? '' },
            })),
          ),
          outcome.attempts,
        );
      return failed(outcome.attempts, 'upstream_error', {
        code: outcome.error.code,
        httpStatus: outcome.error.httpStatus,
        message: outcome.error.message,
      });
    }
    const r = outcome.result;
    if (r.kind !== 'chat') throw new Error(`a chat call answered with a ${r.kind} result`);
    const cost = costMicros({ usage: r.usage, result: r }, outcome.slot.pricing);
    spend?.answered(outcome.slot, r, cost);
    const summary = (r.content ?? '').trim();
    const ok = summary.length > 0;
    return {
      ok,
      summary,
      usage: r.usage,
      cost,
      slot: outcome.slot,
      attempts: outcome.attempts,
      outcome: ok ? 'success' : 'upstream_error',
      errorCode: ok ? null : 'EMPTY_SUMMARY',
      httpStatus: ok ? 200 : 502,
      message: ok ? null : 'the model answered with an empty summary',
    };
  } catch (err) {
    spend?.failed();
    // The project cap (or a cap without pricing, or the outage policy) refused the call.
    if (err instanceof GatewayError) return refused(err, []);
    throw err;
  }
}

/**
 * Folds a session's older turns into its running summary, if it is still past its threshold: the
 * first exchange and the latest turns stay verbatim. Runs after a request has been answered, never
 * on a request's path. The summary call is a request-log entry of type `session_summary` (usage and
 * cost included, and in the usage report); a failed call keeps every turn and logs the failure.
 */
export async function summarize(deps: SummarizeDeps, job: SummarizeJob): Promise<void> {
  const started = performance.now();
  const session = await deps.store.load(job.ref);
  if (!session) return;
  const wf = job.workflow;
  const threshold = wf.config.sessionMemory.summarizeAtTokens;
  if (sessionTokens(session) <= threshold) return;
  const range = planFold(session.turns, threshold);
  if (!range) return;
  const folded = session.turns.slice(range.start, range.end);
  const req = summaryRequest(session.summary, folded, threshold);
  const id = randomUUID();
  const s = await callModel(job, id, req, session.summary, folded);
  const type = wf.slots[0]!.target.type;
  let outcome: 'success' | 'error' | 'stale' = s.ok ? 'success' : 'error';
  let version = session.summaryVersion;
  if (s.ok) {
    const applied = await deps.store.fold(job.ref, {
      expectedVersion: session.summaryVersion,
      start: range.start,
      end: range.end,
      summary: s.summary,
      summaryTokens: countMessageTokens([{ role: 'system', content: SUMMARY_PREFIX + s.summary }], type),
    });
    if (applied.applied) version = applied.version;
    else outcome = 'stale';
  }
  const projectId = job.ref.projectId;
  deps.metrics.summaries.inc({ project: projectId, workflow: wf.config.name, outcome });
  if (outcome === 'error')
    deps.logger.warn({
      msg: 'session summary failed; turns kept',
      project: projectId,
      workflow: wf.config.name,
      session_id: job.ref.sessionId,
      err: s.message,
    });
  const cost = s.cost;
  const now = deps.now();
  const entry = eventEntry({
    request_log_id: id,
    type: 'session_summary',
    time: new Date(now).toISOString(),
    project_id: projectId,
    api_key_id: job.keyId,
    workflow: wf.config.name,
    session_id: job.ref.sessionId,
    status: s.ok ? 'success' : 'error',
    outcome: s.outcome,
    http_status: s.httpStatus,
    error_code: s.errorCode,
    used_provider: s.slot?.provider ?? null,
    used_model: s.slot?.model ?? null,
    attempts: s.attempts,
    usage: s.usage ?? null,
    cost_usd: cost === null ? null : microsToUsd(cost),
    duration_ms: Math.round((performance.now() - started) * 1000) / 1000,
    test_mode: wf.config.testMode,
    details: {
      applied: outcome === 'success',
      summary_version: version,
      folded_turns: s.ok ? range.end - range.start : 0,
      kept_turns: session.turns.length - (s.ok ? range.end - range.start : 0),
      ...(outcome === 'stale' ? { reason: 'another gateway summarised this session first' } : {}),
      ...(s.message ? { error: s.message } : {}),
      triggered_by: job.triggeredBy,
    },
  });
  deps.state.settle({
    projectId,
    log: entry,
    usage:
      s.usage && s.slot
        ? {
            hourStartSec: Math.floor(now / 3_600_000) * 3600,
            workflow: wf.config.name,
            provider: s.slot.provider,
            model: s.slot.model,
            requests: 1,
            prompt_tokens: s.usage.prompt_tokens,
            completion_tokens: s.usage.completion_tokens,
            total_tokens: s.usage.total_tokens,
            cost_micros: cost,
          }
        : undefined,
    logCap: job.logCap,
  });
}
