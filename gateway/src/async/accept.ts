import { GatewayError } from '../errors/index.ts';
import { maskStored } from '../guardrails/values.ts';
import type { Exchange } from '../pipeline/exchange.ts';
import type { NativeBody } from '../requests/native-schema.ts';
import { type ChannelDoc, topicOf } from './channels.ts';
import type { AsyncDeps } from './deps.ts';
import type { RunJob } from './runner.ts';

export interface AsyncAck {
  message: string;
  status: 'pending';
  channel_id: string;
  session_id: string | null;
  ws_token: string;
  websocket_url: string;
  websocket_channel: string;
}

/**
 * Admits an async request now (refusals are thrown for the surface's error encoder) and queues its
 * job; `channelId` is the new channel's id (the route logs the acceptance under it).
 */
export async function accept(
  d: AsyncDeps,
  ex: Exchange,
  body: NativeBody,
  baseUrl: string,
  channelId: string,
): Promise<AsyncAck> {
  // The body is what the job carries (BullMQ serialises it): serialised once before admission takes
  // rate units and anything is written, so a body that cannot be stored leaves nothing behind.
  JSON.stringify(body);
  const accepted = await d.pipeline.accept(ex, { body, stream: false });
  if (accepted.kind === 'refused') throw accepted.error;
  const p = accepted.prepared;
  const projectId = ex.auth.project.config.id;
  // A session workflow's id: the client's, or the one the session feature started at admission.
  const sessionId = accepted.notes.sessionId ?? null;
  const now = d.now();
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
    // The job waits in Redis: what guardrails mask in the request is masked in it too.
    body: maskStored(
      ex.auth.project,
      p.workflowName,
      ex.auth.key.keyId,
      sessionId && !body.session_id ? { ...body, session_id: sessionId } : body,
    ),
    acceptedAt: now,
    ...accepted.notes.carried,
    ...(trace ? { trace } : {}),
  };
  let token: string;
  try {
    await d.channels.create({ state: 'pending', doc }, d.config.channelTtlSec);
    token = await d.tokens.issue({ projectId, channelId }, d.config.tokenTtlMs);
    await d.runner.enqueueRun(job);
  } catch (err) {
    // Without Redis no pod could run, complete or deliver the job: refuse rather than lose it.
    d.logger.warn({
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
  const wsBase = (d.config.publicUrl ?? baseUrl).replace(/^http/, 'ws');
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
