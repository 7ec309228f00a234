import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { type Exchange, openExchange } from '../pipeline/exchange.ts';
import type { Ending } from '../pipeline/finished.ts';
import type { Prepared } from '../pipeline/prepare.ts';
import type { Answer, FinishedResult } from '../pipeline/result.ts';
import { type Settle, settleEnd } from '../pipeline/settle.ts';
import type { ChatRequest } from '../providers/types.ts';
import type { RuntimeWorkflow } from '../snapshot/runtime.ts';
import { countMessageTokens, countTextTokens } from '../tokens/count.ts';
import { messageText, planFold, SUMMARY_PREFIX, sessionTokens } from './compose.ts';
import type { SessionMetrics } from './metrics.ts';
import type { SessionRef, SessionStore, Turn } from './types.ts';

export interface SummarizeDeps {
  store: SessionStore;
  metrics: SessionMetrics;
  logger: Logger;
  now: () => number;
  caller: SummaryCaller;
}

/**
 * How a summary call runs: through the summary pipeline (the limits-and-caps feature and the
 * failover chain, so it counts toward spend caps like any request) and the one settle.
 */
export interface SummaryCaller {
  call(ex: Exchange, p: Prepared): Promise<FinishedResult>;
  settle: Settle;
}

export interface SummarizeJob {
  ref: SessionRef;
  workflow: RuntimeWorkflow;
  /** The turn's exchange and request: the summary runs for the same key, on the same workflow. */
  exchange: Exchange;
  prepared: Prepared;
  /** The request whose answer pushed the session past its threshold. */
  triggeredBy: string;
  /** The session's size from the provider's reported usage, and the summary version it was measured at. */
  measured?: { tokens: number; summaryVersion: number };
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

/** Test mode: nothing reaches a provider and nothing is spent (caps are not consulted). */
function testModeAnswer(job: SummarizeJob, req: ChatRequest, previous: string, folded: Turn[]): Answer {
  const wf = job.workflow;
  const primary = wf.slots[0]!;
  const summary = testModeSummary(previous, folded, wf.config.sessionMemory.summarizeAtTokens);
  const prompt = countMessageTokens(req.messages, primary.target.type);
  const completion = countTextTokens(summary, primary.target.type);
  const usage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  return {
    slot: primary,
    attempts: [{ provider: primary.provider, model: primary.model, status: 'success' }],
    result: {
      kind: 'chat',
      id: 'summary',
      content: summary,
      finish_reason: 'stop',
      usage,
      model: primary.model,
    },
    usage,
    costMicros: 0,
    structured: undefined,
  };
}

/** The summary text of a call that answered; an empty one is a failure of the provider's. */
function summaryOf(r: FinishedResult): { text: string; result: FinishedResult } {
  if (r.kind !== 'answered') return { text: '', result: r };
  const res = r.answer.result;
  const text = res.kind === 'chat' ? (res.content ?? '').trim() : '';
  if (text) return { text, result: r };
  const message = 'the model answered with an empty summary';
  return {
    text,
    result: {
      kind: 'failed',
      prepared: r.prepared,
      notes: r.notes,
      failure: {
        slot: undefined,
        attempts: r.answer.attempts,
        code: 'EMPTY_SUMMARY',
        message,
        providerMessage: message,
        httpStatus: 502,
        upstreamStatus: undefined,
        usage: undefined,
        costMicros: 0,
        aborted: false,
      },
    },
  };
}

const statusOf = (r: FinishedResult): number =>
  r.kind === 'answered' ? 200 : r.kind === 'failed' ? r.failure.httpStatus : r.error.status;

const messageOf = (r: FinishedResult): string | null =>
  r.kind === 'failed' ? r.failure.providerMessage : r.kind === 'refused' ? r.error.message : null;

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
  // The reported measure holds while nobody has folded the session since it was taken.
  const measured = job.measured?.summaryVersion === session.summaryVersion ? job.measured.tokens : 0;
  if (Math.max(sessionTokens(session), measured) <= threshold) return;
  const range = planFold(session.turns, threshold);
  if (!range) return;
  const folded = session.turns.slice(range.start, range.end);
  const req = summaryRequest(session.summary, folded, threshold);
  const auth = job.exchange.auth;
  const ex = openExchange({
    id: randomUUID(),
    kind: 'summary',
    surface: 'internal',
    startedAt: started,
    auth,
    signal: AbortSignal.timeout(120_000),
    // In the trace of the request whose turn crossed the threshold.
    trace: job.exchange.trace.child('switchyard.session.summary'),
  });
  // Estimates and the chain price the summary request, not the user's.
  const p: Prepared = {
    ...job.prepared,
    request: req,
    plan: { ...job.prepared.plan, requestType: 'chat', structured: undefined, json: false },
    customerData: {},
    sessionId: undefined,
  };
  const called: FinishedResult = wf.config.testMode
    ? { kind: 'answered', prepared: p, notes: {}, answer: testModeAnswer(job, req, session.summary, folded) }
    : await deps.caller.call(ex, p);
  const { text, result } = summaryOf(called);
  const type = wf.slots[0]!.target.type;
  let outcome: 'success' | 'error' | 'stale' = text ? 'success' : 'error';
  let version = session.summaryVersion;
  if (text) {
    const applied = await deps.store.fold(job.ref, {
      expectedVersion: session.summaryVersion,
      start: range.start,
      end: range.end,
      summary: text,
      summaryTokens: countMessageTokens([{ role: 'system', content: SUMMARY_PREFIX + text }], type),
    });
    if (applied.applied) version = applied.version;
    else outcome = 'stale';
  }
  const projectId = job.ref.projectId;
  deps.metrics.summaries.inc({ project: projectId, workflow: wf.config.name, outcome });
  const message = messageOf(result);
  if (outcome === 'error')
    deps.logger.warn({
      msg: 'session summary failed; turns kept',
      project: projectId,
      workflow: wf.config.name,
      session_id: job.ref.sessionId,
      err: message,
    });
  const foldedTurns = text ? range.end - range.start : 0;
  // What the summary established is its own: the request it priced, its session and its result (an
  // empty summary counts as the provider's failure).
  const progress = { stream: false, prepared: p, notes: { sessionId: job.ref.sessionId }, result };
  const ending: Ending = {
    id: ex.id,
    surface: 'internal',
    type: 'session_summary',
    method: null,
    path: null,
    httpStatus: statusOf(result),
    project: auth.project,
    keyId: auth.key.keyId,
    error: undefined,
    aborted: false,
    trace: ex.trace,
    details: {
      applied: outcome === 'success',
      summary_version: version,
      folded_turns: foldedTurns,
      kept_turns: session.turns.length - foldedTurns,
      ...(outcome === 'stale' ? { reason: 'another gateway summarised this session first' } : {}),
      ...(message ? { error: message } : {}),
      triggered_by: job.triggeredBy,
    },
  };
  settleEnd(deps.caller.settle, ending, started, progress);
}
