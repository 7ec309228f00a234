import { randomUUID } from 'node:crypto';
import { GatewayError } from '../errors/index.ts';
import type { TraceContext } from '../tracing/types.ts';
import type { ChannelDoc, ChannelRecord, ResultBody } from './channels.ts';
import { deliver } from './delivery.ts';
import type { AsyncDeps } from './deps.ts';
import type { TimerJob } from './runner.ts';

export type CallbackAnswer = { status: 'completed'; channel_id: string; task_id: string | null };

/** What a pipeline workflow's backend answers with (POST /v1/callback/{channel_id}). */
export interface CallbackInput {
  data: Record<string, unknown>;
  task_id?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
}

/**
 * POST /v1/callback/{channel_id}: the backend's answer to task.ai_generated. A span in the trace
 * of the accepted request, linked to `link`, the callback request's own span.
 */
export async function callback(
  d: AsyncDeps,
  projectId: string,
  channelId: string,
  cb: CallbackInput,
  link?: TraceContext,
): Promise<CallbackAnswer> {
  const rec = await d.channels.get(projectId, channelId);
  if (!rec) throw new GatewayError('not_found', `Channel ${channelId} does not exist in this project.`);
  const step = d.tracing.callback('callback', rec.doc, link);
  try {
    return await complete(d, rec, cb, step.context);
  } catch (err) {
    step.fail(err instanceof GatewayError ? err.code : 'internal_error', (err as Error).message);
    throw err;
  } finally {
    step.end();
  }
}

/**
 * The final result of a backend-pipeline request: the backend's data merged over the generated
 * data; a non-object answer (chat text) is kept under `ai_response`. The console's pipeline
 * simulation merges with this too, so it shows what a real callback produces.
 */
export function mergeCallback(ai: ResultBody, data: Record<string, unknown>): ResultBody {
  const base =
    ai.data !== null && typeof ai.data === 'object' && !Array.isArray(ai.data)
      ? (ai.data as Record<string, unknown>)
      : { ai_response: ai.data };
  return { ...ai, data: { ...base, ...data } };
}

async function complete(
  d: AsyncDeps,
  rec: ChannelRecord,
  cb: CallbackInput,
  trace: TraceContext | undefined,
): Promise<CallbackAnswer> {
  const { project_id: projectId, channel_id: channelId } = rec.doc;
  if (rec.state === 'timed_out') throw closedError(channelId);
  if (rec.state !== 'awaiting_callback') throw conflictError(channelId, rec.state);
  const now = d.now();
  if (rec.doc.deadline_at !== null && now >= rec.doc.deadline_at) {
    await timeout(d, rec);
    throw closedError(channelId);
  }
  const result = mergeCallback(rec.doc.ai_response as ResultBody, cb.data);
  const doc: ChannelDoc = { ...rec.doc, updated_at: now, result };
  const t = await d.channels.transition(projectId, channelId, ['awaiting_callback'], {
    state: 'completed',
    doc,
  });
  if (!t.ok) {
    if (t.current === 'timed_out') throw closedError(channelId);
    throw conflictError(channelId, t.current ?? 'expired');
  }
  await deliver(
    d,
    { state: 'completed', doc },
    { task_id: cb.task_id ?? null, metadata: cb.metadata ?? {} },
    trace,
  );
  return { status: 'completed', channel_id: channelId, task_id: cb.task_id ?? null };
}

/** A deadline or a simulated backend came due. */
export async function timer(d: AsyncDeps, job: TimerJob): Promise<void> {
  const rec = await d.channels.get(job.projectId, job.channelId);
  if (rec?.state !== 'awaiting_callback') return;
  if (job.kind === 'simulate') {
    await callback(d, job.projectId, job.channelId, {
      data: { id: randomUUID() },
      task_id: `simulated-${job.channelId}`,
      metadata: { simulated: true },
    }).catch((err: unknown) => {
      if (!(err instanceof CallbackError)) throw err;
    });
    return;
  }
  const deadline = rec.doc.deadline_at ?? 0;
  if (d.now() < deadline) {
    // Fired early (queue time and the injected clock disagree): arm it again.
    await d.runner.scheduleTimer({ ...job, atMs: deadline }, deadline);
    return;
  }
  await timeout(d, rec);
}

async function timeout(d: AsyncDeps, rec: ChannelRecord): Promise<void> {
  const step = d.tracing.callback('callback_timeout', rec.doc);
  try {
    await timeOut(d, rec, step.context);
  } finally {
    step.end();
  }
}

async function timeOut(d: AsyncDeps, rec: ChannelRecord, trace: TraceContext | undefined): Promise<void> {
  const ai = rec.doc.ai_response as ResultBody;
  const message = `No callback arrived within ${Math.round(d.config.callbackTimeoutMs / 1000)} s.`;
  const result: ResultBody = {
    ...ai,
    data: null,
    error: { message, code: 'callback_timeout', details: { status: 504, message } },
    meta: { ...ai.meta, status: 'error', http_status: 504 },
  };
  const doc: ChannelDoc = { ...rec.doc, updated_at: d.now(), result };
  const t = await d.channels.transition(rec.doc.project_id, rec.doc.channel_id, ['awaiting_callback'], {
    state: 'timed_out',
    doc,
  });
  if (t.ok) await deliver(d, { state: 'timed_out', doc }, undefined, trace);
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
