import { randomUUID } from 'node:crypto';
import type { RunJob } from '../async/runner.ts';
import { lockConversation, type Unlock } from '../conversations/lock.ts';
import { continuedConversation } from '../conversations/turn.ts';
import { answeredResponse, type ResponseEcho, responseObject } from '../encoders/encode-responses.ts';
import { ResponsesStreamEncoder, type TypedEvent } from '../encoders/encode-responses-stream.ts';
import { GatewayError } from '../errors/index.ts';
import { type Exchange, openExchange } from '../pipeline/exchange.ts';
import type { Ending } from '../pipeline/finished.ts';
import type { PipelineResult } from '../pipeline/result.ts';
import { settleEnd } from '../pipeline/settle.ts';
import type { ChatMessage } from '../providers/types.ts';
import { type ResponsesBody, responsesBody } from '../requests/responses-schema.ts';
import { type ResponsesTurn, responsesToNative } from '../requests/responses-translate.ts';
import { assistantTurn } from '../stored-responses/record.ts';
import type { StoredResponse } from '../stored-responses/types.ts';
import { type BackgroundDeps, backgroundJob, DAY_MS, LIVE } from './types.ts';

const CHAT_TYPES = ['chat', 'vision'] as const;
type Response = Record<string, unknown>;

/** The spec's error codes for a response that failed: a rate limit, or the server's. */
const errorCode = (status: number): string => (status === 429 ? 'rate_limit_exceeded' : 'server_error');

/**
 * The job of a background response, on whichever pod takes it. It moves the stored response from
 * `queued` to `in_progress`, runs the one pipeline (streamed when the request streams, each event
 * appended to the response's event log), and stores the final response with a compare-and-set from
 * `in_progress`, so a cancel that came first wins and the job's answer is dropped. A job run again
 * after its pod died finds `in_progress`: a non-streamed response is run again; a streamed one, whose
 * readers have seen part of a stream that cannot be produced twice, is marked failed.
 */
export async function runBackground(d: BackgroundDeps, job: RunJob): Promise<void> {
  const bg = backgroundJob.parse(job.response);
  const { projectId } = job;
  const rec = await d.store.get(projectId, bg.id);
  if (!rec?.background) return;
  const status = String(rec.response.status);
  if (!(LIVE as readonly string[]).includes(status)) return;
  const runtime = d.snapshots.current;
  const project = runtime?.projects.get(projectId);
  const key = runtime?.keys.get(job.keyHash);
  const retentionMs = (project?.config.storedResponses.retentionDays ?? 30) * DAY_MS;
  const streamed = rec.background.stream;
  const log = new EventLog(d, projectId, bg.id, retentionMs);
  const finish = async (response: Response, events: TypedEvent[], extra: Partial<StoredResponse> = {}) => {
    const won = await d.store.transition(projectId, { ...rec, ...extra, response }, ['in_progress']);
    if (won && streamed) await log.append(events);
    return won;
  };
  const failedObject = (code: string, message: string): Response => ({
    ...rec.response,
    status: 'failed',
    error: { code, message },
  });

  if (status === 'in_progress' && streamed) {
    const failed = failedObject(
      'server_error',
      'The gateway process running this response stopped mid-stream.',
    );
    await finish(failed, [
      { type: 'response.failed', sequence_number: 0, response: failed },
      {
        type: 'error',
        sequence_number: 0,
        code: 'server_error',
        message: String((failed.error as { message: string }).message),
        param: null,
      },
    ]);
    return;
  }
  if (status === 'queued') {
    const running = { ...rec.response, status: 'in_progress' };
    if (!(await d.store.transition(projectId, { ...rec, response: running }, ['queued']))) return;
    if (streamed) await log.append([{ type: 'response.in_progress', sequence_number: 0, response: running }]);
  }
  if (!project || !key || key.notAfterMs <= d.now()) {
    const failed = failedObject(
      'server_error',
      'The API key or project was removed before the response ran.',
    );
    await finish(failed, failEvents(failed));
    return;
  }

  // A conversation is read when its turn runs, under its turn lock, as a request's is; the turn is
  // checked against it again (it may have changed since the response was accepted).
  let unlock: Unlock | undefined;
  let body: ResponsesBody;
  let turn: ResponsesTurn;
  try {
    let history = bg.history as unknown as ChatMessage[];
    if (bg.conversationId) {
      unlock = await lockConversation(d.conversations, projectId, bg.conversationId);
      history = (await continuedConversation(d.conversations, projectId, bg.conversationId)).history;
    }
    body = responsesBody.parse(bg.request);
    turn = responsesToNative(
      body,
      history,
      bg.sessionId,
      project.workflows.get(body.model)?.config.hostedTools,
    );
  } catch (err) {
    await unlock?.();
    // Redis away: the queue runs the job again.
    if (!(err instanceof GatewayError) || err.code === 'service_unavailable') throw err;
    const failed = failedObject(errorCode(err.status), err.message);
    await finish(failed, failEvents(failed));
    return;
  }
  try {
    const echo: ResponseEcho = {
      id: bg.id,
      createdAt: bg.createdAt,
      model: body.model,
      body,
      toolNames: turn.toolNames,
    };
    const id = randomUUID();
    const trace = d.tracing.job(job.trace, bg.id);
    const startedAt = performance.now();
    const abort = new AbortController();
    const ex: Exchange = openExchange({
      id,
      kind: 'job',
      surface: 'responses',
      startedAt,
      auth: { key, keyHash: job.keyHash, project },
      signal: abort.signal,
      carried: job.admittedTokens !== undefined ? { admittedTokens: job.admittedTokens } : undefined,
      trace,
    });
    // A cancel (or a delete) is a write to the stored response, from any pod: the running job looks for it.
    const watch = setInterval(() => {
      d.store.get(projectId, bg.id).then(
        (now) => {
          if (!now || now.response.status === 'cancelled') abort.abort();
        },
        () => undefined,
      );
    }, d.pollMs);
    watch.unref();
    let error: GatewayError | undefined;
    let final: Response;
    let events: TypedEvent[] = [];
    try {
      const r = await d.pipeline.run(ex, {
        body: turn.native,
        stream: streamed,
        compat: { allowed: CHAT_TYPES },
      });
      if (r.kind === 'refused') error = r.error;
      ({ final, events } = await outcome(r, echo, log));
    } finally {
      clearInterval(watch);
    }
    const sessionId = ex.progress.notes.sessionId ?? bg.sessionId;
    const won = await finish(final, events, {
      conversation: [
        ...turn.conversation,
        assistantTurn(final.output, turn.toolNames),
      ] as unknown as Response[],
      ...(sessionId ? { sessionId } : {}),
    });
    if (won && bg.conversationId && final.status !== 'failed') {
      const output = (Array.isArray(final.output) ? final.output : []) as Response[];
      const appended = await d.conversations
        .append(projectId, bg.conversationId, [...turn.items, ...output] as never, retentionMs)
        .catch(() => false);
      if (!appended)
        d.logger.warn({
          msg: 'background: conversation not appended',
          response_id: bg.id,
          conversation: bg.conversationId,
        });
    }
    const ok = final.status === 'completed' || final.status === 'incomplete';
    const ending: Ending = {
      id,
      surface: 'responses',
      type: 'request',
      method: 'POST',
      path: '/v1/responses',
      httpStatus: ok ? 200 : (error?.status ?? 502),
      project,
      keyId: key.keyId,
      error,
      aborted: abort.signal.aborted,
      channelId: bg.id,
      body: turn.native,
      trace,
    };
    settleEnd(d.settle, ending, startedAt, ex.progress);
  } finally {
    await unlock?.();
  }
}

/** The final response and, for a stream, its last events; a stream's earlier events go to the log as they come. */
async function outcome(
  r: PipelineResult,
  echo: ResponseEcho,
  log: EventLog,
): Promise<{ final: Response; events: TypedEvent[] }> {
  const failed = (code: string, message: string) =>
    responseObject(echo, { status: 'failed', output: [], error: { code, message } });
  if (r.kind === 'refused') {
    const f = failed(errorCode(r.error.status), r.error.message);
    return { final: f, events: failEvents(f) };
  }
  if (r.kind === 'failed') {
    const f = failed(
      errorCode(r.failure.httpStatus),
      `The provider returned an error: ${r.failure.providerMessage}`,
    );
    return { final: f, events: failEvents(f) };
  }
  if (r.kind === 'answered') {
    if (r.answer.result.kind !== 'chat')
      throw new Error(`unexpected ${r.answer.result.kind} result for a response`);
    const final = answeredResponse(echo, r.answer.result);
    return { final, events: [] };
  }
  const enc = new ResponsesStreamEncoder(echo);
  enc.start(); // created and in_progress are in the log already, written as the state changed
  let step = await r.events.next();
  while (!step.done) {
    await log.append(enc.next(step.value));
    step = await r.events.next();
  }
  const end = step.value;
  if (end.ok) {
    const done = enc.finish(end.answer.usage);
    return { final: done.response, events: done.events };
  }
  const code = end.failure.httpStatus === 429 ? 'rate_limit_exceeded' : 'server_error';
  const events = enc.fail(code, `The stream failed after it started: ${end.failure.message}`);
  const final = (events[0]?.response ?? failed(code, end.failure.message)) as Response;
  return { final, events };
}

const failEvents = (f: Response): TypedEvent[] => {
  const e = f.error as { code: string; message: string };
  return [
    { type: 'response.failed', sequence_number: 0, response: f },
    { type: 'error', sequence_number: 0, code: e.code, message: e.message, param: null },
  ];
};

/**
 * A background response's event log as one job writes it: events are numbered by their place in
 * the log (the accepting request wrote `response.created` and `response.queued`, 0 and 1), so a
 * reader's `starting_after` is an index.
 */
class EventLog {
  readonly #d: BackgroundDeps;
  readonly #projectId: string;
  readonly #id: string;
  readonly #ttlMs: number;
  #next: number | undefined;

  constructor(d: BackgroundDeps, projectId: string, id: string, ttlMs: number) {
    this.#d = d;
    this.#projectId = projectId;
    this.#id = id;
    this.#ttlMs = ttlMs;
  }

  async append(events: TypedEvent[]): Promise<void> {
    if (events.length === 0) return;
    const next = this.#next ?? (await this.#d.store.events(this.#projectId, this.#id, 0)).length;
    this.#next = next + events.length;
    const out = events.map((e, i) => JSON.stringify({ ...e, sequence_number: next + i }));
    await this.#d.store.appendEvents(this.#projectId, this.#id, out, this.#ttlMs);
  }
}
