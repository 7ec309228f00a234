import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { GatewayError } from '../errors/index.ts';
import type { Exchange } from '../pipeline/exchange.ts';
import type { Feature, FeatureRun, RunEnd } from '../pipeline/feature.ts';
import type { Prepared } from '../pipeline/prepare.ts';
import type { ChatMessage, ChatRequest } from '../providers/types.ts';
import type { RuntimeWorkflow } from '../snapshot/runtime.ts';
import { countMessageTokens } from '../tokens/count.ts';
import { leadLength, planFold, sessionTokens, withMemory } from './compose.ts';
import { sessionMetrics } from './metrics.ts';
import { type SummaryCaller, summarize } from './summarize.ts';
import { SESSION_ID, type SessionData, type SessionRef, type SessionStore, type Turn } from './types.ts';

export interface SessionFeatureDeps {
  store: SessionStore;
  registry: Registry;
  logger: Logger;
  now: () => number;
  /** Runs and settles a summary call (through the limits-and-caps feature: summaries count toward caps). */
  summaries: SummaryCaller;
}

/** Session memory as a feature, plus what shutdown and tests wait on. */
export interface SessionMemory extends Feature {
  /** Resolves once every append and summary started so far has finished (or `maxWaitMs` passed). */
  workDone(maxWaitMs?: number): Promise<void>;
}

const APPEND_RETRIES_MS = [250, 500, 1000, 2000, 3000];

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

const unavailable = (err: unknown): GatewayError =>
  new GatewayError('service_unavailable', 'Session memory is unavailable right now.', {
    retryAfterSeconds: 1,
    cause: err,
  });

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

/** The answer as the turn a session keeps (chat answers only; a failure keeps nothing). */
/** Prompt plus completion tokens as the provider reported them for an answer, when it did. */
function reportedTokens(end: RunEnd): number | undefined {
  if (end.kind !== 'answered' || !end.answer.usage) return undefined;
  const u = end.answer.usage;
  return u.prompt_tokens + u.completion_tokens;
}

function answerMessage(end: RunEnd): ChatMessage | undefined {
  if (end.kind !== 'answered') return undefined;
  const r = end.answer.result;
  if (r.kind !== 'chat') return undefined;
  return {
    role: 'assistant',
    content: r.content,
    ...(r.tool_calls?.length ? { tool_calls: r.tool_calls } : {}),
  };
}

/**
 * Session memory. One exchange's lifecycle: `begin` loads (or starts) the session and puts its
 * summary and turns into the request; `finish` stores the new messages and the answer before the
 * answer is sent (an answer the client received is never missing from its session, even if this
 * pod is killed right after), and past the workflow's threshold starts a summary in the background.
 * An async acceptance checks (or starts) the session only; its job continues it. Requests to
 * workflows without session memory cost one property read.
 */
export function sessionMemory(deps: SessionFeatureDeps): SessionMemory {
  const { store } = deps;
  const projects = new Set<string>();
  const metrics = sessionMetrics(deps.registry, projects, (p) => store.countActive(p));
  /** Sessions this process is summarising now (a second trigger waits for the next request). */
  const summarising = new Set<string>();
  /** Appends and summaries still running (no answer waits for a summary). */
  const running = new Set<Promise<void>>();
  const summarizeDeps = { store, metrics, logger: deps.logger, now: deps.now, caller: deps.summaries };

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

  async function open(
    ex: Exchange,
    wf: RuntimeWorkflow,
    sessionId: string | undefined,
  ): Promise<SessionData & { ref: SessionRef }> {
    const cfg = wf.config.sessionMemory;
    const projectId = ex.auth.project.config.id;
    projects.add(projectId);
    if (sessionId === undefined) {
      const ref = { projectId, sessionId: randomUUID(), ttlSeconds: cfg.ttlSeconds };
      try {
        await store.create(ref, wf.config.name);
      } catch (err) {
        throw unavailable(err);
      }
      metrics.started.inc({ project: projectId, workflow: wf.config.name });
      return { ...emptySession(ref.sessionId, wf.config.name, deps.now()), ref };
    }
    // A malformed id names no session: the same 422 as an unknown or foreign one, nothing revealed.
    if (!SESSION_ID.test(sessionId)) throw notFound(sessionId);
    const ref = { projectId, sessionId: sessionId.toLowerCase(), ttlSeconds: cfg.ttlSeconds };
    let loaded: SessionData | undefined;
    try {
      loaded = await store.load(ref);
    } catch (err) {
      throw unavailable(err);
    }
    // A session belongs to the workflow that started it (its threshold, lifetime and instructions).
    if (!loaded || loaded.workflow !== wf.config.name) throw notFound(sessionId);
    return { ...loaded, ref };
  }

  /** Stores the turns of an answered request, then (in the background) summarises past the threshold. */
  function remember(
    ex: Exchange,
    p: Prepared,
    wf: RuntimeWorkflow,
    s: SessionData & { ref: SessionRef },
    fresh: ChatMessage[],
    answer: ChatMessage,
    measured: number | undefined,
  ): Promise<void> {
    const at = deps.now();
    const type = wf.slots[0]!.target.type;
    const turns: Turn[] = [...fresh, answer].map(({ cache, ...message }) => ({
      // A cache breakpoint belongs to the request that set it: replayed turns must not add their own.
      message,
      tokens: countMessageTokens([message], type),
      at,
    }));
    // Turns carry estimates (tokens/count.ts); the provider's reported usage, when there is one, is
    // the session's real size, so a session the estimates under-count still reaches its threshold.
    const total = Math.max(
      turns.reduce((n, t) => n + t.tokens, sessionTokens(s)),
      measured ?? 0,
    );
    const threshold = wf.config.sessionMemory.summarizeAtTokens;
    const key = `${s.ref.projectId}/${s.ref.sessionId}`;
    const due =
      total > threshold && !summarising.has(key) && planFold([...s.turns, ...turns], threshold) !== undefined;
    if (due) summarising.add(key);
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
        if (ok && due)
          await summarize(summarizeDeps, {
            ref: s.ref,
            workflow: wf,
            exchange: ex,
            prepared: p,
            triggeredBy: ex.id,
            ...(measured !== undefined && measured > threshold
              ? { measured: { tokens: measured, summaryVersion: s.summaryVersion } }
              : {}),
          });
      })
      .catch((err: unknown) =>
        deps.logger.warn({ msg: 'session summary failed', session_id: s.ref.sessionId, err: String(err) }),
      )
      .finally(() => {
        if (due) summarising.delete(key);
        running.delete(task);
      });
    running.add(task);
    return appended.then(() => undefined);
  }

  async function begin(
    ex: Exchange,
    p: Prepared,
    wf: RuntimeWorkflow,
    sessionId: string | undefined,
  ): Promise<FeatureRun> {
    const s = await open(ex, wf, sessionId);
    const notes = { sessionId: s.ref.sessionId };
    // An accepted async request: its job continues the session (it carries the id).
    if (ex.kind === 'accept') return { notes, finish: () => undefined };
    const req = p.request as ChatRequest;
    const lead = leadLength(req.messages);
    const fresh = req.messages.slice(lead);
    return {
      notes,
      request: { ...req, messages: withMemory(req.messages, s) },
      finish(end) {
        const answer = answerMessage(end);
        // A failed request leaves the session as it was: the client retries the same message.
        if (!answer) return undefined;
        // What the provider counted, less the leading instructions (estimated), which are not session.
        const reported = reportedTokens(end);
        const measured =
          reported === undefined
            ? undefined
            : reported - countMessageTokens(req.messages.slice(0, lead), wf.slots[0]!.target.type);
        return remember(ex, p, wf, s, fresh, answer, measured);
      },
    };
  }

  return {
    name: 'session-memory',
    begin({ ex, p }) {
      const wf = p.plan.workflow;
      const sessionId = p.sessionId;
      if (!wf?.config.sessionMemory.enabled || p.request.kind !== 'chat') {
        if (sessionId !== undefined) throw noMemory(p);
        return undefined;
      }
      return begin(ex, p, wf, sessionId);
    },
    async workDone(maxWaitMs = Number.POSITIVE_INFINITY) {
      const deadline = performance.now() + maxWaitMs;
      while (running.size > 0) {
        const left = deadline - performance.now();
        if (left <= 0) return;
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          Promise.allSettled([...running]),
          ...(Number.isFinite(left) ? [new Promise((r) => (timer = setTimeout(r, left)))] : []),
        ]);
        clearTimeout(timer);
      }
    },
  };
}
