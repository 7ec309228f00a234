import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { microsToUsd, usdToMicros } from '#contract';
import { GatewayError } from '../errors/index.ts';
import { uuid } from '../requests/common-schema.ts';
import { invalidRequest } from '../requests/zod-error.ts';
import {
  InvalidCursorError,
  type LogQuery,
  MAX_USAGE_RANGE_MS,
  type RuntimeState,
  requestLogTypes,
  StateUnavailableError,
  UsageRangeError,
  type UsageRow,
} from '../state/types.ts';
import { qualityTotals } from '../state/usage-quality.ts';
import { authOf } from './context.ts';

const DAY_MS = 86_400_000;
const MAX_USAGE_RANGE_DAYS = MAX_USAGE_RANGE_MS / DAY_MS;

/** ISO 8601 with a zone, or Unix milliseconds, into Unix milliseconds. */
const instant = z
  .string()
  .min(1)
  .transform((s, ctx) => {
    const ms = /^\d{1,15}$/.test(s)
      ? Number(s)
      : /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/.test(s)
        ? Date.parse(s)
        : Number.NaN;
    if (Number.isNaN(ms)) {
      ctx.addIssue({
        code: 'custom',
        message: 'must be an ISO 8601 time (e.g. 2026-11-23T10:00:00Z) or Unix milliseconds',
      });
      return z.NEVER;
    }
    return ms;
  });

const logsQuery = z
  .object({
    workflow: z.string().min(1).max(128).optional(),
    status: z.enum(['success', 'error'], { error: 'status must be success or error' }).optional(),
    session_id: uuid.optional(),
    channel_id: uuid.optional(),
    type: z.enum(requestLogTypes, { error: `type must be one of ${requestLogTypes.join(', ')}` }).optional(),
    from: instant.optional(),
    to: instant.optional(),
    cursor: z.string().min(1).max(512).optional(),
    limit: z.coerce
      .number({ error: 'limit must be an integer from 1 to 500' })
      .int('limit must be an integer from 1 to 500')
      .min(1, 'limit must be an integer from 1 to 500')
      .max(500, 'limit must be an integer from 1 to 500')
      .default(50),
  })
  .strict()
  .refine((q) => q.from === undefined || q.to === undefined || q.from <= q.to, {
    message: 'from must not be after to',
    path: ['from'],
  });

const usageQuery = z
  .object({
    from: instant.optional(),
    to: instant.optional(),
    group_by: z
      .enum(['workflow', 'model'], { error: 'group_by must be workflow or model' })
      .default('workflow'),
    granularity: z.enum(['hour', 'day'], { error: 'granularity must be hour or day' }).default('hour'),
    include: z.enum(['quality'], { error: 'include must be quality' }).optional(),
  })
  .strict();

function parseQuery<T>(schema: z.ZodType<T>, raw: unknown): T {
  const parsed = schema.safeParse(raw ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  if (issue?.code === 'unrecognized_keys')
    throw new GatewayError('invalid_request', `Unknown query parameter "${issue.keys[0]}".`, {
      param: issue.keys[0],
    });
  throw invalidRequest(parsed.error);
}

/** State errors in the API's vocabulary: a bad cursor is the client's, an outage is a 503. */
function stateError(err: unknown): never {
  if (err instanceof InvalidCursorError)
    throw new GatewayError('invalid_request', 'Invalid cursor: pass back next_cursor from a previous page.', {
      param: 'cursor',
    });
  if (err instanceof UsageRangeError)
    throw new GatewayError('invalid_request', err.message, { param: 'from' });
  if (err instanceof StateUnavailableError)
    throw new GatewayError(
      'service_unavailable',
      'Request logs and usage are unavailable right now; retry shortly.',
      {
        retryAfterSeconds: 1,
      },
    );
  throw err;
}

function totals(rows: UsageRow[]) {
  let priced = false;
  let micros = 0;
  const t = { requests: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, unpriced_requests: 0 };
  for (const r of rows) {
    t.requests += r.requests;
    t.prompt_tokens += r.prompt_tokens;
    t.completion_tokens += r.completion_tokens;
    t.total_tokens += r.total_tokens;
    t.unpriced_requests += r.unpriced_requests;
    if (r.cost_usd !== null) {
      priced = true;
      micros += usdToMicros(r.cost_usd);
    }
  }
  return { ...t, cost_usd: priced ? microsToUsd(micros) : null, ...qualityTotals(rows) };
}

/**
 * Read APIs over runtime state for keys with the `console` scope: request logs and usage of the
 * key's own project only (another project's data is never reachable: the project comes from the key).
 */
export function readRoutes(app: FastifyInstance, state: RuntimeState, now: () => number): void {
  const config = { scope: 'console' } as const;

  app.get('/request-logs', { config }, async (req, reply) => {
    const auth = authOf(req);
    const q = parseQuery(logsQuery, req.query);
    const query: LogQuery = { limit: q.limit };
    for (const k of [
      'workflow',
      'status',
      'session_id',
      'channel_id',
      'type',
      'from',
      'to',
      'cursor',
    ] as const)
      if (q[k] !== undefined) Object.assign(query, { [k]: q[k] });
    const started = performance.now();
    const page = await state.queryLogs(auth.project.config.id, query).catch(stateError);
    // The server's own timing (the console's speed test reads it): the read, and the whole request so far.
    reply.header(
      'server-timing',
      `state;dur=${(performance.now() - started).toFixed(1)}, total;dur=${reply.elapsedTime.toFixed(1)}`,
    );
    return {
      object: 'list',
      data: page.entries,
      next_cursor: page.next_cursor,
      has_more: page.next_cursor !== null,
    };
  });

  app.get('/usage', { config }, async (req) => {
    const auth = authOf(req);
    const q = parseQuery(usageQuery, req.query);
    const to = q.to ?? now();
    const from = q.from ?? to - DAY_MS;
    if (from >= to) throw new GatewayError('invalid_request', 'from must be before to.', { param: 'from' });
    if (to - from > MAX_USAGE_RANGE_DAYS * DAY_MS)
      throw new GatewayError(
        'invalid_request',
        `The range from..to may span at most ${MAX_USAGE_RANGE_DAYS} days.`,
        {
          param: 'from',
        },
      );
    const rows = await state
      .queryUsage(auth.project.config.id, {
        from,
        to,
        groupBy: q.group_by,
        granularity: q.granularity,
        ...(q.include === 'quality' ? { quality: true } : {}),
      })
      .catch(stateError);
    return {
      object: 'usage',
      project_id: auth.project.config.id,
      from: new Date(from).toISOString(),
      to: new Date(to).toISOString(),
      group_by: q.group_by,
      granularity: q.granularity,
      data: rows,
      totals: totals(rows),
    };
  });
}
