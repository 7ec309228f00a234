import { randomUUID } from 'node:crypto';
import { wrappedBody } from '../encoders/encode-native.ts';
import { GatewayError, InternalError } from '../errors/index.ts';
import { type Exchange, openExchange } from '../pipeline/exchange.ts';
import type { Ending } from '../pipeline/finished.ts';
import { settleEnd } from '../pipeline/settle.ts';
import type { ChannelDoc, ResultBody } from './channels.ts';
import { aiGenerated, deliver, redeliver } from './delivery.ts';
import type { AsyncDeps } from './deps.ts';
import type { RunJob } from './runner.ts';

/**
 * The job of an accepted async request, on whichever pod takes it: runs the pipeline, settles its
 * request-log entry (this handler owns the exchange, as the HTTP layer owns a request's), and
 * delivers if this run wins the channel.
 */
export async function runJob(d: AsyncDeps, job: RunJob): Promise<void> {
  const rec = await d.channels.get(job.projectId, job.channelId);
  if (!rec) return; // expired long ago
  if (rec.state !== 'pending') {
    // A re-run after a crash between completing and acknowledging the job: deliver again
    // (sockets and webhooks deduplicate), run nothing.
    await redeliver(d, rec);
    return;
  }
  const runtime = d.snapshots.current;
  const project = runtime?.projects.get(job.projectId);
  const key = runtime?.keys.get(job.keyHash);
  const id = randomUUID();
  const trace = d.tracing.job(job.trace, job.channelId);
  const startedAt = performance.now();
  let body: ResultBody;
  let ex: Exchange | undefined;
  let error: GatewayError | undefined;
  if (!project || !key || key.notAfterMs <= d.now()) {
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
    const r = await d.pipeline.run(ex, { body: job.body, stream: false });
    if (r.kind === 'streaming') throw new Error('async jobs never stream');
    body = r.kind === 'refused' ? errorResult(id, startedAt, rec.doc, r.error) : wrappedBody(ex, r);
    if (r.kind === 'refused' && r.error instanceof InternalError)
      d.logger.error({ msg: 'async: internal error', channel_id: job.channelId, err: r.error.cause });
  }
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
  settleEnd(d.settle, ending, startedAt, ex?.progress);
  const now = d.now();
  if (ok && rec.doc.event_name && project) {
    const deadline = now + d.config.callbackTimeoutMs;
    const doc: ChannelDoc = { ...rec.doc, updated_at: now, ai_response: body, deadline_at: deadline };
    const t = await d.channels.transition(job.projectId, job.channelId, ['pending'], {
      state: 'awaiting_callback',
      doc,
    });
    if (!t.ok) return;
    await d.runner.scheduleTimer(
      { kind: 'deadline', channelId: job.channelId, projectId: job.projectId, atMs: deadline },
      deadline,
    );
    await d.webhooks.emit(project, 'task.ai_generated', aiGenerated(doc), job.channelId, trace.context);
    if (ex?.progress.prepared?.plan.testMode) {
      const at = now + d.config.simulatedBackendMs;
      await d.runner.scheduleTimer(
        { kind: 'simulate', channelId: job.channelId, projectId: job.projectId, atMs: at },
        at,
      );
    }
    return;
  }
  const state = ok ? 'completed' : 'failed';
  const doc: ChannelDoc = { ...rec.doc, updated_at: now, result: body };
  const t = await d.channels.transition(job.projectId, job.channelId, ['pending'], { state, doc });
  if (t.ok) await deliver(d, { state, doc }, undefined, trace.context);
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
