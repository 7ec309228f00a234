import { type ResponseEcho, responseObject } from '../encoders/encode-responses.ts';
import { GatewayError } from '../errors/index.ts';
import { maskStored } from '../guardrails/values.ts';
import type { Exchange } from '../pipeline/exchange.ts';
import type { ChatMessage } from '../providers/types.ts';
import type { ResponsesBody } from '../requests/responses-schema.ts';
import type { ResponsesTurn } from '../requests/responses-translate.ts';
import type { StoredResponse } from '../stored-responses/types.ts';
import type { BackgroundDeps, BackgroundJob } from './types.ts';

const CHAT_TYPES = ['chat', 'vision'] as const;

/** A background request as the route resolved it. */
export interface BackgroundRequest {
  /** The accepting exchange (kind `accept`), settled by the HTTP layer. */
  ex: Exchange;
  body: ResponsesBody;
  turn: ResponsesTurn;
  echo: ResponseEcho;
  /** The conversation it continues (previous_response_id's or the conversation's items). */
  history: ChatMessage[];
  /** The session of previous_response_id (session-memory workflows). */
  sessionId: string | undefined;
  conversationId: string | undefined;
  retentionMs: number;
}

const invalid = (message: string, param: string): GatewayError =>
  new GatewayError('invalid_request', message, { param });

/**
 * Admits a background response now (refusals answer at once, as for an async request), stores it
 * `queued` (with its first two stream events when it streams) and queues its job. Returns the queued
 * response object.
 */
export async function acceptBackground(
  d: BackgroundDeps,
  r: BackgroundRequest,
): Promise<Record<string, unknown>> {
  if (r.body.store === false)
    throw invalid('A background response is stored to be retrieved: store must not be false.', 'store');
  const projectId = r.ex.auth.project.config.id;
  const wf = r.ex.auth.project.workflows.get(r.body.model);
  if (wf?.config.eventName)
    throw invalid(
      `Workflow "${wf.config.name}" is a backend-pipeline workflow and runs only on the async endpoint.`,
      'model',
    );
  const native = { ...r.turn.native, stream: undefined };
  const accepted = await d.pipeline.accept(r.ex, {
    body: native,
    stream: false,
    compat: { allowed: CHAT_TYPES },
  });
  if (accepted.kind === 'refused') throw accepted.error;
  const queued = responseObject(r.echo, { status: 'queued', output: [] });
  const stream = r.body.stream === true;
  // The response and its job wait in Redis: what guardrails mask in the request is masked in them.
  const mask = <T>(value: T): T => maskStored(r.ex.auth.project, r.body.model, r.ex.auth.key.keyId, value);
  const record: StoredResponse = mask({
    id: r.echo.id,
    workflow: r.body.model,
    response: queued,
    items: r.turn.items,
    conversation: r.turn.conversation as unknown as Record<string, unknown>[],
    background: { stream },
  });
  const sessionId = accepted.notes.sessionId ?? r.sessionId;
  const payload: BackgroundJob = mask({
    id: r.echo.id,
    createdAt: r.echo.createdAt,
    request: r.body as Record<string, unknown>,
    // A conversation's items are read when the job runs, under the conversation's turn lock.
    history: r.conversationId ? [] : (r.history as unknown as Record<string, unknown>[]),
    ...(sessionId ? { sessionId } : {}),
    ...(r.conversationId ? { conversationId: r.conversationId } : {}),
  });
  const trace = r.ex.trace.context;
  try {
    await d.store.put(projectId, record, r.retentionMs);
    if (stream)
      await d.store.appendEvents(
        projectId,
        r.echo.id,
        [
          JSON.stringify({ type: 'response.created', sequence_number: 0, response: queued }),
          JSON.stringify({ type: 'response.queued', sequence_number: 1, response: queued }),
        ],
        r.retentionMs,
      );
    await d.runner.enqueueRun({
      channelId: r.echo.id,
      projectId,
      keyHash: r.ex.auth.keyHash,
      body: native,
      acceptedAt: d.now(),
      ...accepted.notes.carried,
      ...(trace ? { trace } : {}),
      response: payload,
    });
  } catch (err) {
    d.logger.warn({ msg: 'background: cannot queue', response_id: r.echo.id, err: (err as Error).message });
    await d.store.delete(projectId, r.echo.id).catch(() => undefined);
    throw new GatewayError(
      'service_unavailable',
      'Background responses cannot be queued right now; retry shortly.',
      {
        retryAfterSeconds: 1,
        cause: err,
      },
    );
  }
  return queued;
}
