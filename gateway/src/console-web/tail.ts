import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { SseWriter } from '../encoders/sse.ts';
import { GatewayError } from '../errors/index.ts';
import { authOf } from '../http/context.ts';
import { uuid } from '../requests/common-schema.ts';
import { type LogQuery, type RequestLogEntry, type RuntimeState, requestLogTypes } from '../state/types.ts';
import { SECURITY_HEADERS } from './static.ts';
import { parseQuery } from './views.ts';

export interface TailOptions {
  state: RuntimeState;
  now: () => number;
  /** How often the request log is read for new entries (default 1 s). */
  pollMs?: number;
  /** A tail ends after this long; the page opens another from where it was (default 5 min). */
  maxMs?: number;
  /** Tails one project may hold open on this gateway at once (default 16). */
  perProject?: number;
}

/** Entries reach the log a flush window after they finish, from every pod: look back this far. */
const LAG_MS = 2000;
/** Most entries one read hands back; a busier second shows its newest ones. */
const PAGE = 100;
const PING_MS = 15_000;

const tailQuery = z
  .object({
    workflow: z.string().min(1).max(128).optional(),
    status: z.enum(['success', 'error'], { error: 'status must be success or error' }).optional(),
    session_id: uuid.optional(),
    channel_id: uuid.optional(),
    type: z.enum(requestLogTypes, { error: `type must be one of ${requestLogTypes.join(', ')}` }).optional(),
    since: z.coerce
      .number({ error: 'since must be Unix milliseconds' })
      .int('since must be Unix milliseconds')
      .nonnegative('since must be Unix milliseconds')
      .optional(),
  })
  .strict();

/** An entry as a list shows it: never its bodies. */
const listed = (e: RequestLogEntry): Omit<RequestLogEntry, 'bodies'> => {
  const { bodies: _bodies, ...rest } = e;
  return rest;
};

/**
 * The live tail of the project's request log, as server-sent events (`entry`, oldest first; `ping`
 * while nothing happens; `unavailable` while runtime state cannot be read). The gateway reads the
 * shared log every `pollMs` with the same filters as the list API, so entries written by any pod
 * arrive; nothing is pushed on the request path. The page closes it while its tab is hidden and
 * opens it again with `since`, so a hidden tab costs nothing.
 */
export function tailRoute(app: FastifyInstance, opts: TailOptions): void {
  const pollMs = opts.pollMs ?? 1000;
  const maxMs = opts.maxMs ?? 300_000;
  const perProject = opts.perProject ?? 16;
  /** Open tails by project: each reads the log once a poll, so a project cannot open without bound. */
  const open = new Map<string, number>();
  const closing = new AbortController();
  app.addHook('preClose', (done) => {
    closing.abort();
    done();
  });

  app.get('/api/logs/tail', { config: { scope: 'console' } }, async (req, reply) => {
    const q = parseQuery(tailQuery, req.query);
    const projectId = authOf(req).project.config.id;
    const holding = open.get(projectId) ?? 0;
    if (holding >= perProject)
      throw new GatewayError(
        'rate_limit_exceeded',
        `This project already has ${perProject} live tails open on this gateway; close one and retry.`,
        { retryAfterSeconds: 5 },
      );
    open.set(projectId, holding + 1);
    try {
      await follow(reply, projectId, q);
    } finally {
      const left = (open.get(projectId) ?? 1) - 1;
      if (left > 0) open.set(projectId, left);
      else open.delete(projectId);
    }
  });

  async function follow(reply: FastifyReply, projectId: string, q: z.infer<typeof tailQuery>): Promise<void> {
    const filters: Omit<LogQuery, 'limit'> = {};
    for (const k of ['workflow', 'status', 'session_id', 'channel_id', 'type'] as const)
      if (q[k] !== undefined) Object.assign(filters, { [k]: q[k] });

    reply.hijack();
    const sse = new SseWriter(reply.raw, { ...SECURITY_HEADERS });
    const started = opts.now();
    let newest = q.since ?? started;
    /** Ids already sent, by the time they finished; forgotten once older than the look-back. */
    const sent = new Map<string, number>();
    let quietSince = started;
    const wake = new AbortController();
    const stop = () => wake.abort();
    reply.raw.once('close', stop);
    closing.signal.addEventListener('abort', stop, { once: true });
    sse.event('open', { since: new Date(newest).toISOString(), poll_ms: pollMs });

    while (sse.open && !wake.signal.aborted && opts.now() - started < maxMs) {
      try {
        const page = await opts.state.queryLogs(projectId, {
          ...filters,
          from: newest - LAG_MS,
          limit: PAGE,
        });
        const fresh = page.entries.filter((e) => !sent.has(e.request_log_id)).reverse();
        for (const e of fresh) {
          const t = Date.parse(e.time);
          sent.set(e.request_log_id, t);
          newest = Math.max(newest, t);
          sse.event('entry', listed(e));
        }
        for (const [id, t] of sent) if (t < newest - LAG_MS) sent.delete(id);
        if (fresh.length) quietSince = opts.now();
      } catch {
        sse.event('unavailable', { message: 'Request logs are unavailable right now; retrying.' });
      }
      if (opts.now() - quietSince >= PING_MS) {
        sse.event('ping', {});
        quietSince = opts.now();
      }
      await sleep(pollMs, wake.signal);
    }
    closing.signal.removeEventListener('abort', stop);
    sse.event('end', { since: new Date(newest).toISOString() });
    sse.end();
  }
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });
