import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { GatewayError, InternalError } from '../errors/index.ts';
import { type Exchange, openExchange } from '../pipeline/exchange.ts';
import type { Ending } from '../pipeline/finished.ts';
import type { Pipeline } from '../pipeline/run.ts';
import { type Settle, settleEnd } from '../pipeline/settle.ts';
import type { NativeBody } from '../requests/native-schema.ts';
import { wrappedBody } from '../responses/encode-native.ts';
import type { SnapshotStore } from '../snapshot/store.ts';
import type { TraceContext, Tracing } from '../tracing/types.ts';
import type { WebhookDispatcher } from '../webhooks/dispatcher.ts';
import type { ResultBus } from './bus.ts';
import type { ChannelDoc, ChannelRecord, ChannelStore, ResultBody } from './channels.ts';
import type { AsyncConfig } from './config.ts';
import type { JobRunner, RunJob, TimerJob } from './runner.ts';
import type { TokenStore } from './tokens.ts';

export interface AsyncAck {
  message: string;
  status: 'pending';
  channel_id: string;
  session_id: string | null;
  ws_token: string;
  websocket_url: string;
  websocket_channel: string;
}

export interface AsyncDeps {
  snapshots: SnapshotStore;
  pipeline: Pipeline;
  settle: Settle;
  logger: Logger;
  now: () => number;
  config: AsyncConfig;
  channels: ChannelStore;
  tokens: TokenStore;
  runner: JobRunner;
  bus: ResultBus;
  webhooks: WebhookDispatcher;
  tracing: Tracing;
}

export const topicOf = (projectId: string, channelId: string): string =>
  `ai_response:${projectId}:${channelId}`;

export type CallbackAnswer = { status: 'completed'; channel_id: string; task_id: string | null };

/**
 * Async requests end to end: accept (admit + enqueue + ack), run (the same pipeline as a sync
 * request, on whichever pod takes the job), then deliver (stored result, pub/sub to sockets,
 * webhooks); for pipeline workflows also the callback and its deadline. Every state change is one
 * atomic ChannelStore transition, so exactly one of any racing parties completes a channel.
 */
export class AsyncService {
  readonly #d: AsyncDeps;

  constructor(deps: AsyncDeps) {
    this.#d = deps;
  }

  /** Where clients reach this gateway (configured; else each request says its own address). */
  get publicUrl(): string | undefined {
    return this.#d.config.publicUrl;
  }

  /**
   * Admits the request now (refusals are thrown for the surface's error encoder) and queues its job;
   * `channelId` is the new channel's id (the route logs the acceptance under it).
   */
  async accept(ex: Exchange, body: NativeBody, baseUrl: string, channelId: string): Promise<AsyncAck> {
    // The body is what the job carries (BullMQ serialises it): serialised once before admission takes
    // rate units and anything is written, so a body that cannot be stored leaves nothing behind.
    JSON.stringify(body);
    const accepted = await this.#d.pipeline.accept(ex, { body, stream: false });
    if (accepted.kind === 'refused') throw accepted.error;
    const p = accepted.prepared;
    const projectId = ex.auth.project.config.id;
    // A session workflow's id: the client's, or the one the session feature started at admission.
    const sessionId = accepted.notes.sessionId ?? null;
    const now = this.#d.now();
    const trace = ex.trace.context;
    const doc: ChannelDoc = {
      channel_id: channelId,
      project_id: projectId,
      workflow: p.workflowName,
      event_name: p.eventName ?? null,
      session_id: sessionId,
      created_at: now,
      updated_at: now,
      deadline_at: null,
      ai_response: null,
      result: null,
      base_url: baseUrl,
      ...(trace ? { trace } : {}),
    };
    const job: RunJob = {
      channelId,
      projectId,
      keyHash: ex.auth.keyHash,
      body: sessionId && !body.session_id ? { ...body, session_id: sessionId } : body,
      acceptedAt: now,
      ...accepted.notes.carried,
      ...(trace ? { trace } : {}),
    };
    let token: string;
    try {
      await this.#d.channels.create({ state: 'pending', doc }, this.#d.config.channelTtlSec);
      token = await this.#d.tokens.issue({ projectId, channelId }, this.#d.config.tokenTtlMs);
      await this.#d.runner.enqueueRun(job);
    } catch (err) {
      // Without Redis no pod could run, complete or deliver the job: refuse rather than lose it.
      this.#d.logger.warn({
        msg: 'async: cannot enqueue',
        channel_id: channelId,
        err: (err as Error).message,
      });
      throw new GatewayError(
        'service_unavailable',
        'Async requests cannot be queued right now; retry shortly.',
        {
          retryAfterSeconds: 1,
          cause: err,
        },
      );
    }
    const wsBase = (this.#d.config.publicUrl ?? baseUrl).replace(/^http/, 'ws');
    return {
      message: 'Request accepted; the result is delivered on the WebSocket channel and to webhooks.',
      status: 'pending',
      channel_id: channelId,
      session_id: sessionId,
      ws_token: token,
      websocket_url: `${wsBase}/socket/websocket`,
      websocket_channel: topicOf(projectId, channelId),
    };
  }

  async get(projectId: string, channelId: string): Promise<ChannelRecord | undefined> {
    return this.#d.channels.get(projectId, channelId);
  }

  /** The job: run the pipeline and settle its request-log entry; deliver if this run wins. */
  async run(job: RunJob): Promise<void> {
    const rec = await this.#d.channels.get(job.projectId, job.channelId);
    if (!rec) return; // expired long ago
    if (rec.state !== 'pending') {
      // A re-run after a crash between completing and acknowledging the job: deliver again
      // (sockets and webhooks deduplicate), run nothing.
      await this.#redeliver(rec);
      return;
    }
    const runtime = this.#d.snapshots.current;
    const project = runtime?.projects.get(job.projectId);
    const key = runtime?.keys.get(job.keyHash);
    const id = randomUUID();
    const trace = this.#d.tracing.job(job.trace, job.channelId);
    const startedAt = performance.now();
    let body: ResultBody;
    let ex: Exchange | undefined;
    let error: GatewayError | undefined;
    if (!project || !key || key.notAfterMs <= this.#d.now()) {
      error = new GatewayError('invalid_api_key', 'The API key or project was removed before the job ran.');
      body = errorResult(id, startedAt, rec.doc, error);
    } else {
      ex = openExchange({
        id,
        kind: 'job',
        surface: 'async',
        startedAt,
        auth: { key, keyHash: job.keyHash, project },
        signal: new AbortController().signal,
        carried: job.admittedTokens !== undefined ? { admittedTokens: job.admittedTokens } : undefined,
        trace,
      });
      const r = await this.#d.pipeline.run(ex, { body: job.body, stream: false });
      if (r.kind === 'streaming') throw new Error('async jobs never stream');
      body = r.kind === 'refused' ? errorResult(id, startedAt, rec.doc, r.error) : wrappedBody(ex, r);
      if (r.kind === 'refused' && r.error instanceof InternalError)
        this.#d.logger.error({ msg: 'async: internal error', channel_id: job.channelId, err: r.error.cause });
    }
    // This handler owns the job's exchange, as the HTTP layer owns a request's: it settles it.
    const ok = ex?.progress.result?.kind === 'answered';
    const ending: Ending = {
      id,
      surface: 'async',
      type: 'request',
      method: 'POST',
      path: '/v1/ai/async',
      httpStatus: ok ? 200 : (body.meta.http_status ?? 502),
      project,
      keyId: key?.keyId,
      error,
      aborted: false,
      channelId: job.channelId,
      body: job.body,
      trace,
    };
    settleEnd(this.#d.settle, ending, startedAt, ex?.progress);
    const now = this.#d.now();
    if (ok && rec.doc.event_name && project) {
      const deadline = now + this.#d.config.callbackTimeoutMs;
      const doc: ChannelDoc = { ...rec.doc, updated_at: now, ai_response: body, deadline_at: deadline };
      const t = await this.#d.channels.transition(job.projectId, job.channelId, ['pending'], {
        state: 'awaiting_callback',
        doc,
      });
      if (!t.ok) return;
      await this.#d.runner.scheduleTimer(
        { kind: 'deadline', channelId: job.channelId, projectId: job.projectId, atMs: deadline },
        deadline,
      );
      await this.#d.webhooks.emit(
        project,
        'task.ai_generated',
        this.#aiGenerated(doc),
        job.channelId,
        trace.context,
      );
      if (ex?.progress.prepared?.plan.testMode) {
        const at = now + this.#d.config.simulatedBackendMs;
        await this.#d.runner.scheduleTimer(
          { kind: 'simulate', channelId: job.channelId, projectId: job.projectId, atMs: at },
          at,
        );
      }
      return;
    }
    const state = ok ? 'completed' : 'failed';
    const doc: ChannelDoc = { ...rec.doc, updated_at: now, result: body };
    const t = await this.#d.channels.transition(job.projectId, job.channelId, ['pending'], { state, doc });
    if (t.ok) await this.#deliver({ state, doc }, undefined, trace.context);
  }

  #aiGenerated(doc: ChannelDoc): Record<string, unknown> {
    return {
      event: doc.event_name,
      channel_id: doc.channel_id,
      ai_response: doc.ai_response,
      callback_url: `${doc.base_url}/v1/callback/${doc.channel_id}`,
      callback_required: true,
    };
  }

  /**
   * POST /v1/callback/{channel_id}: the backend's answer to task.ai_generated. A span in the trace
   * of the accepted request, linked to `link`, the callback request's own span.
   */
  async callback(
    projectId: string,
    channelId: string,
    cb: {
      data: Record<string, unknown>;
      task_id?: string | undefined;
      metadata?: Record<string, unknown> | undefined;
    },
    link?: TraceContext,
  ): Promise<CallbackAnswer> {
    const rec = await this.#d.channels.get(projectId, channelId);
    if (!rec) throw new GatewayError('not_found', `Channel ${channelId} does not exist in this project.`);
    const step = this.#d.tracing.callback('callback', rec.doc, link);
    try {
      return await this.#complete(rec, cb, step.context);
    } catch (err) {
      step.fail(err instanceof GatewayError ? err.code : 'internal_error', (err as Error).message);
      throw err;
    } finally {
      step.end();
    }
  }

  async #complete(
    rec: ChannelRecord,
    cb: Parameters<AsyncService['callback']>[2],
    trace: TraceContext | undefined,
  ): Promise<CallbackAnswer> {
    const { project_id: projectId, channel_id: channelId } = rec.doc;
    if (rec.state === 'timed_out') throw closedError(channelId);
    if (rec.state !== 'awaiting_callback') throw conflictError(channelId, rec.state);
    const now = this.#d.now();
    if (rec.doc.deadline_at !== null && now >= rec.doc.deadline_at) {
      await this.#timeout(rec);
      throw closedError(channelId);
    }
    const ai = rec.doc.ai_response as ResultBody;
    // The backend's data merged over the generated data; a non-object answer (chat text) is kept
    // under `ai_response`.
    const base =
      ai.data !== null && typeof ai.data === 'object' && !Array.isArray(ai.data)
        ? (ai.data as Record<string, unknown>)
        : { ai_response: ai.data };
    const result: ResultBody = { ...ai, data: { ...base, ...cb.data } };
    const doc: ChannelDoc = { ...rec.doc, updated_at: now, result };
    const t = await this.#d.channels.transition(projectId, channelId, ['awaiting_callback'], {
      state: 'completed',
      doc,
    });
    if (!t.ok) {
      if (t.current === 'timed_out') throw closedError(channelId);
      throw conflictError(channelId, t.current ?? 'expired');
    }
    await this.#deliver(
      { state: 'completed', doc },
      { task_id: cb.task_id ?? null, metadata: cb.metadata ?? {} },
      trace,
    );
    return { status: 'completed', channel_id: channelId, task_id: cb.task_id ?? null };
  }

  /** A deadline or a simulated backend came due. */
  async timer(job: TimerJob): Promise<void> {
    const rec = await this.#d.channels.get(job.projectId, job.channelId);
    if (rec?.state !== 'awaiting_callback') return;
    if (job.kind === 'simulate') {
      await this.callback(job.projectId, job.channelId, {
        data: { id: randomUUID() },
        task_id: `simulated-${job.channelId}`,
        metadata: { simulated: true },
      }).catch((err: unknown) => {
        if (!(err instanceof CallbackError)) throw err;
      });
      return;
    }
    const deadline = rec.doc.deadline_at ?? 0;
    if (this.#d.now() < deadline) {
      // Fired early (queue time and the injected clock disagree): arm it again.
      await this.#d.runner.scheduleTimer({ ...job, atMs: deadline }, deadline);
      return;
    }
    await this.#timeout(rec);
  }

  async #timeout(rec: ChannelRecord): Promise<void> {
    const step = this.#d.tracing.callback('callback_timeout', rec.doc);
    try {
      await this.#timeOut(rec, step.context);
    } finally {
      step.end();
    }
  }

  async #timeOut(rec: ChannelRecord, trace: TraceContext | undefined): Promise<void> {
    const ai = rec.doc.ai_response as ResultBody;
    const message = `No callback arrived within ${Math.round(this.#d.config.callbackTimeoutMs / 1000)} s.`;
    const result: ResultBody = {
      ...ai,
      data: null,
      error: { message, code: 'callback_timeout', details: { status: 504, message } },
      meta: { ...ai.meta, status: 'error', http_status: 504 },
    };
    const doc: ChannelDoc = { ...rec.doc, updated_at: this.#d.now(), result };
    const t = await this.#d.channels.transition(
      rec.doc.project_id,
      rec.doc.channel_id,
      ['awaiting_callback'],
      {
        state: 'timed_out',
        doc,
      },
    );
    if (t.ok) await this.#deliver({ state: 'timed_out', doc }, undefined, trace);
  }

  /** The final result: pub/sub to whichever pod holds the socket, then the webhook (under `trace`). */
  async #deliver(
    rec: ChannelRecord,
    callback?: { task_id: string | null; metadata: Record<string, unknown> },
    trace: TraceContext | undefined = rec.doc.trace,
  ): Promise<void> {
    const { doc } = rec;
    if (!doc.result) return;
    await this.#d.bus.publish({ projectId: doc.project_id, channelId: doc.channel_id, result: doc.result });
    const project = this.#d.snapshots.current?.projects.get(doc.project_id);
    if (!project) return;
    const common = {
      channel_id: doc.channel_id,
      status: doc.result.meta.status,
      data: doc.result.data,
      meta: doc.result.meta,
      workflow: doc.workflow,
    };
    if (rec.state === 'timed_out')
      await this.#d.webhooks.emit(
        project,
        'callback.timeout',
        { ...common, event: doc.event_name, error: doc.result.error },
        doc.channel_id,
        trace,
      );
    else if (rec.state === 'failed')
      // A pipeline workflow whose AI step failed never reached its backend: an error, not a task.
      await this.#d.webhooks.emit(
        project,
        'ai.error',
        { ...common, ...(doc.event_name ? { event: doc.event_name } : {}), error: doc.result.error },
        doc.channel_id,
        trace,
      );
    else if (doc.event_name)
      await this.#d.webhooks.emit(
        project,
        'task.completed',
        { ...common, event: doc.event_name, ...callback },
        doc.channel_id,
        trace,
      );
    else await this.#d.webhooks.emit(project, 'ai.response', common, doc.channel_id, trace);
  }

  async #redeliver(rec: ChannelRecord): Promise<void> {
    if (rec.state === 'awaiting_callback') {
      const project = this.#d.snapshots.current?.projects.get(rec.doc.project_id);
      const deadline = rec.doc.deadline_at ?? this.#d.now();
      await this.#d.runner.scheduleTimer(
        { kind: 'deadline', channelId: rec.doc.channel_id, projectId: rec.doc.project_id, atMs: deadline },
        deadline,
      );
      if (project)
        await this.#d.webhooks.emit(
          project,
          'task.ai_generated',
          this.#aiGenerated(rec.doc),
          rec.doc.channel_id,
          rec.doc.trace,
        );
      return;
    }
    await this.#deliver(rec);
  }
}

/** A job refused (or whose key went away): the wrapped error body, in the refusal's own words. */
function errorResult(id: string, startedAt: number, doc: ChannelDoc, err: GatewayError): ResultBody {
  return {
    data: null,
    customer_data: {},
    error: { message: err.message, code: err.code, details: { status: err.status, message: err.message } },
    meta: {
      status: 'error',
      http_status: err.status,
      workflow: doc.workflow,
      requested_provider: '',
      requested_model: '',
      used_provider: null,
      used_model: null,
      duration_ms: Math.round(performance.now() - startedAt),
      usage: {},
      structured_output: false,
      attempts: [],
      request_log_id: id,
    },
    backups: [],
  };
}

/** A refused callback: 409 (the channel awaits none) or 410 (its window closed). */
export class CallbackError extends GatewayError {
  constructor(code: 'callback_conflict' | 'callback_window_closed', message: string, hint?: string) {
    super(code, message, { hint });
    this.name = 'CallbackError';
  }
}

const conflictError = (channelId: string, state: string) =>
  new CallbackError(
    'callback_conflict',
    `Channel ${channelId} does not await a callback (it is ${state}).`,
    'A channel accepts one callback, after its task.ai_generated webhook.',
  );
const closedError = (channelId: string) =>
  new CallbackError(
    'callback_window_closed',
    `The callback window of channel ${channelId} has closed; the timeout was delivered.`,
  );
