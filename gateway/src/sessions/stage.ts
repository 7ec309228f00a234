import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { GatewayError } from '../errors/index.ts';
import type { GatewayMetrics } from '../observability/metrics.ts';
import type { Exchange } from '../pipeline/exchange.ts';
import type { Prepared } from '../pipeline/prepare.ts';
import type { Completion, PipelineStages } from '../pipeline/stages.ts';
import type { ChatMessage, ChatRequest } from '../providers/types.ts';
import type { RuntimeWorkflow } from '../snapshot/runtime.ts';
import type { RuntimeState } from '../state/types.ts';
import { countMessageTokens } from '../tokens/count.ts';
import { leadLength, planFold, sessionTokens, withMemory } from './compose.ts';
import { sessionMetrics } from './metrics.ts';
import { sessionStoreFor } from './store.ts';
import { type SummarizeJob, summarize } from './summarize.ts';
import type { OpenSummarySpend } from './summary-spend.ts';
import { SESSION_ID, type SessionData, type SessionRef, type Turn } from './types.ts';

export interface SessionFeatureDeps {
  state: RuntimeState;
  metrics: GatewayMetrics;
  logger: Logger;
  now: () => number;
  /**
   * The spend caps of the summary call a turn of `ex` triggers (summary-spend.ts `summarySpendVia`
   * on the final stages): summaries count toward the project's and the slots' caps like requests.
   */
  summarySpend?: ((ex: Exchange, p: Prepared) => OpenSummarySpend) | undefined;
}

/** What the session stage hands the completed stage of the same request. */
interface Pending {
  ref: SessionRef;
  workflow: RuntimeWorkflow;
  /** The client's new messages (after its leading system messages): they become turns with the answer. */
  fresh: ChatMessage[];
  tokensBefore: number;
  /** The turns the request was sent with: a summary is due only if some of them can be folded. */
  turns: Turn[];
}

const APPEND_RETRIES_MS = [250, 500, 1000, 2000, 3000];

/** Appends and summaries still running per runtime state (no answer waits for a summary). */
const background = new WeakMap<RuntimeState, Set<Promise<void>>>();

/**
 * Resolves once every session append and summarisation started so far on `state` has finished: for
 * graceful shutdown (before the state closes) and for tests that read a session right after a turn.
 */
export async function sessionWorkDone(
  state: RuntimeState,
  maxWaitMs = Number.POSITIVE_INFINITY,
): Promise<void> {
  const work = background.get(state);
  const deadline = performance.now() + maxWaitMs;
  while (work && work.size > 0) {
    const left = deadline - performance.now();
    if (left <= 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.allSettled([...work]),
      ...(Number.isFinite(left) ? [new Promise((r) => (timer = setTimeout(r, left)))] : []),
    ]);
    clearTimeout(timer);
  }
}

const notFound = (id: string): GatewayError =>
  new GatewayError('session_not_found', `Session "${id}" does not exist in this project.`, {
    param: 'session_id',
    hint: "Sessions expire after the workflow's sessionMemory.ttlSeconds idle; send the request without session_id to start a new one.",
  });

function noMemory(p: Prepared): GatewayError {
  const subject = p.workflowName ? `Workflow "${p.workflowName}"` : `Model "${p.requestedModel}"`;
  return new GatewayError(
    'invalid_request',
    `${subject} has no session memory: session_id is only accepted by workflows with sessionMemory.enabled.`,
    {
      param: 'session_id',
      hint: 'Remove session_id, or set spec.sessionMemory.enabled: true on the Workflow.',
    },
  );
}

const emptySession = (id: string, workflow: string, now: number): SessionData => ({
  id,
  workflow,
  createdAt: now,
  summary: '',
  summaryVersion: 0,
  summaryTokens: 0,
  foldedTurns: 0,
  turns: [],
});

function answerMessage(done: Completion): ChatMessage | undefined {
  if (!done.ok) return undefined;
  if ('streamedText' in done) return { role: 'assistant', content: done.streamedText };
  const r = done.result;
  if (r.kind !== 'chat') return undefined;
  return {
    role: 'assistant',
    content: r.content,
    ...(r.tool_calls?.length ? { tool_calls: r.tool_calls } : {}),
  };
}

/**
 * Session memory (DESIGN.md "Response cache and sessions") as two pipeline stages: `session` loads
 * (or starts) the session and puts its summary and turns into the request; `completed` appends the
 * new messages and the answer, and past the workflow's threshold starts a summarisation in the
 * background. Requests to workflows without session memory cost one property read.
 */
export function sessionMemory(deps: SessionFeatureDeps): Pick<PipelineStages, 'session' | 'completed'> {
  const store = sessionStoreFor(deps.state, deps.now);
  const projects = new Set<string>();
  const metrics = sessionMetrics(deps.metrics.registry, projects, (p) => store.countActive(p));
  const pending = new WeakMap<Exchange, Pending>();
  /** Sessions this process is summarising now (a second trigger waits for the next request). */
  const summarising = new Set<string>();
  const summarizeDeps = { store, state: deps.state, metrics, logger: deps.logger, now: deps.now };
  let work = background.get(deps.state);
  if (!work) {
    work = new Set();
    background.set(deps.state, work);
  }
  const running = work;

  const unavailable = (err: unknown): GatewayError =>
    new GatewayError('service_unavailable', 'Session memory is unavailable right now.', {
      retryAfterSeconds: 1,
      cause: err,
    });

  /**
   * An answered turn outlives a short Redis outage (a restart, a failover): the append is retried for
   * about 7 s. RPUSH is not idempotent, so a reply lost after the script ran could duplicate a turn;
   * losing an answered turn is the worse failure.
   */
  const appendWithRetry = async (ref: SessionRef, turns: Turn[]): Promise<boolean> => {
    for (let attempt = 0; ; attempt++) {
      try {
        return await store.append(ref, turns);
      } catch (err) {
        if (attempt >= APPEND_RETRIES_MS.length) throw err;
        await new Promise((r) => setTimeout(r, APPEND_RETRIES_MS[attempt]).unref());
      }
    }
  };

  const session: PipelineStages['session'] = async (ex, p, sessionId) => {
    const wf = p.plan.workflow;
    if (!wf?.config.sessionMemory.enabled || p.request.kind !== 'chat') {
      if (sessionId !== undefined) throw noMemory(p);
      return;
    }
    const cfg = wf.config.sessionMemory;
    const projectId = ex.auth.project.config.id;
    projects.add(projectId);
    let data: SessionData;
    let ref: SessionRef;
    if (sessionId === undefined) {
      ref = { projectId, sessionId: randomUUID(), ttlSeconds: cfg.ttlSeconds };
      try {
        await store.create(ref, wf.config.name);
      } catch (err) {
        throw unavailable(err);
      }
      metrics.started.inc({ project: projectId, workflow: wf.config.name });
      data = emptySession(ref.sessionId, wf.config.name, deps.now());
    } else {
      // A malformed id names no session: the same 422 as an unknown or foreign one, nothing revealed.
      if (!SESSION_ID.test(sessionId)) throw notFound(sessionId);
      ref = { projectId, sessionId: sessionId.toLowerCase(), ttlSeconds: cfg.ttlSeconds };
      let loaded: SessionData | undefined;
      try {
        loaded = await store.load(ref);
      } catch (err) {
        throw unavailable(err);
      }
      // A session belongs to the workflow that started it (its threshold, lifetime and instructions).
      if (!loaded || loaded.workflow !== wf.config.name) throw notFound(sessionId);
      data = loaded;
    }
    ex.record.sessionId = ref.sessionId;
    const req = p.request as ChatRequest;
    pending.set(ex, {
      ref,
      workflow: wf,
      fresh: req.messages.slice(leadLength(req.messages)),
      tokensBefore: sessionTokens(data),
      turns: data.turns,
    });
    req.messages = withMemory(req.messages, data);
  };

  const completed: PipelineStages['completed'] = (ex, p, done) => {
    const s = pending.get(ex);
    if (!s) return undefined;
    pending.delete(ex);
    const answer = answerMessage(done);
    // A failed request leaves the session as it was: the client retries the same message.
    if (!answer) return undefined;
    const at = deps.now();
    const type = s.workflow.slots[0]!.target.type;
    const turns: Turn[] = [...s.fresh, answer].map((message) => ({
      message,
      tokens: countMessageTokens([message], type),
      at,
    }));
    const total = turns.reduce((n, t) => n + t.tokens, s.tokensBefore);
    const threshold = s.workflow.config.sessionMemory.summarizeAtTokens;
    const key = `${s.ref.projectId}/${s.ref.sessionId}`;
    let job: SummarizeJob | undefined;
    if (total > threshold && !summarising.has(key) && planFold([...s.turns, ...turns], threshold)) {
      summarising.add(key);
      job = {
        ref: s.ref,
        workflow: s.workflow,
        logCap: ex.auth.project.config.requestLogs.maxEntries,
        keyId: ex.record.keyId ?? null,
        spend: deps.summarySpend?.(ex, p),
        triggeredBy: ex.id,
      };
    }
    // The answer waits for its turns to be stored: an answer the client received is never missing
    // from the session, even if this pod is killed right after sending it.
    const appended = appendWithRetry(s.ref, turns).then(
      (ok) => {
        if (!ok)
          deps.logger.warn({
            msg: 'session expired before its answer was appended',
            session_id: s.ref.sessionId,
          });
        return ok;
      },
      (err: unknown) => {
        deps.logger.warn({ msg: 'session append failed', session_id: s.ref.sessionId, err: String(err) });
        return false;
      },
    );
    const task: Promise<void> = appended
      .then(async (ok) => {
        // The summary runs in the background: no answer waits for it.
        if (ok && job) await summarize(summarizeDeps, job);
      })
      .catch((err: unknown) =>
        deps.logger.warn({ msg: 'session summary failed', session_id: s.ref.sessionId, err: String(err) }),
      )
      .finally(() => {
        if (job) summarising.delete(key);
        running.delete(task);
      });
    running.add(task);
    return appended.then(() => undefined);
  };

  return { session, completed };
}
