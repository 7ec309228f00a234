import { z } from 'zod';
import type { StateClient } from './connect.ts';
import type { QualityFigures, QualityIncrement } from './usage-quality.ts';

/**
 * The runtime-state contract: everything the gateway keeps between requests (request logs and usage
 * now; rate limits, spend, cache, sessions and jobs as their issues land). Two adapters implement
 * it, Redis (./redis/) and in-process memory (./memory/), and one contract suite (test/state) runs
 * against both and against a real Redis Cluster. Entries cross a process boundary (Redis), so they
 * are zod schemas, not just types.
 */

/** Kinds of request-log entry. Later issues write the non-`request` kinds. */
export const requestLogTypes = [
  'request',
  'webhook_attempt',
  'callback',
  'session_summary',
  'budget_threshold',
  'tool_call',
] as const;
export type RequestLogType = (typeof requestLogTypes)[number];

const usage = z.object({
  prompt_tokens: z.number().int().nonnegative(),
  completion_tokens: z.number().int().nonnegative().optional(),
  total_tokens: z.number().int().nonnegative(),
});

const attempt = z.object({
  provider: z.string(),
  model: z.string(),
  status: z.enum(['success', 'error', 'skipped']),
  reason: z
    .object({ message: z.string(), status: z.number().int().optional(), code: z.string().optional() })
    .optional(),
  duration_ms: z.number().optional(),
});

/** One request-log entry. Never holds an API key; bodies only when the Project opts in. */
export const requestLogEntry = z.object({
  request_log_id: z.string(),
  type: z.enum(requestLogTypes),
  /** ISO 8601 UTC, when the request finished. */
  time: z.string(),
  project_id: z.string(),
  /** `<namespace>/<name>` of the ApiKey, never the key. */
  api_key_id: z.string().nullable(),
  surface: z.enum(['native', 'compat', 'responses', 'messages', 'async', 'internal', 'mcp']),
  method: z.string().nullable(),
  path: z.string().nullable(),
  workflow: z.string().nullable(),
  channel_id: z.string().nullable(),
  session_id: z.string().nullable(),
  /** `success` or `error`: what the filter `status=` matches. */
  status: z.enum(['success', 'error']),
  /** Finer than status: success, upstream_error, client_error, stream_error, aborted, ... */
  outcome: z.string(),
  http_status: z.number().int(),
  error_code: z.string().nullable(),
  used_provider: z.string().nullable(),
  used_model: z.string().nullable(),
  attempts: z.array(attempt),
  usage: usage.nullable(),
  /** Decimal USD string; null when the model's pricing is unknown (never a made-up zero). */
  cost_usd: z.string().nullable(),
  cache: z.enum(['hit', 'miss', 'bypass']).nullable(),
  stream: z.boolean(),
  duration_ms: z.number(),
  ttft_ms: z.number().nullable(),
  customer_data: z.record(z.string(), z.unknown()),
  test_mode: z.boolean(),
  /** The OpenTelemetry trace the entry belongs to (32 hex digits); null with tracing off, and in older entries. */
  trace_id: z.string().nullable().default(null),
  /** Free-form details of non-request entries (webhook attempt, callback, summary, threshold). */
  details: z.record(z.string(), z.unknown()).optional(),
  /** Request and response bodies, only for projects with `requestLogs.bodies: true`. */
  bodies: z.object({ request: z.unknown(), response: z.unknown() }).optional(),
});
export type RequestLogEntry = z.infer<typeof requestLogEntry>;

/** Usage added by one finished request, bucketed by the hour it finished in. */
export interface UsageIncrement {
  /** Unix seconds of the UTC hour the request finished in. */
  hourStartSec: number;
  /** '' for direct provider+model requests. */
  workflow: string;
  provider: string;
  model: string;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Integer micro-USD; null when pricing is unknown (counted as an unpriced request instead). */
  cost_micros: number | null;
  /** What every settled request adds, with or without usage (errors, cache, failover, duration). */
  quality?: QualityIncrement;
}

/** What one finished request writes, after its answer was sent: one pipelined round trip on Redis. */
export interface StateWrite {
  projectId: string;
  log?: RequestLogEntry;
  usage?: UsageIncrement;
  /** Max entries kept in the project's request-log stream (approximate trimming on Redis). */
  logCap: number;
}

export interface LogQuery {
  workflow?: string;
  status?: 'success' | 'error';
  session_id?: string;
  channel_id?: string;
  type?: RequestLogType;
  /** Inclusive bounds, Unix milliseconds. */
  from?: number;
  to?: number;
  /** Opaque cursor from a previous page's `next_cursor`. */
  cursor?: string;
  limit: number;
}

export interface LogPage {
  /** Newest first. */
  entries: RequestLogEntry[];
  /** Pass back as `cursor` for the next (older) page; null at the end. */
  next_cursor: string | null;
}

export interface UsageQuery {
  /** Inclusive start and exclusive end, Unix milliseconds; aligned down to the hour. */
  from: number;
  to: number;
  groupBy: 'workflow' | 'model';
  granularity: 'hour' | 'day';
  /** Add each row's quality figures (and rows that have only those, such as a period of errors). */
  quality?: boolean;
}

/** With `quality` asked, the row carries its quality figures too. */
export interface UsageRow extends Partial<QualityFigures> {
  /** ISO 8601 UTC start of the hour or day. */
  period_start: string;
  /** groupBy=workflow: the workflow ('' for direct requests); groupBy=model: null. */
  workflow: string | null;
  /** groupBy=model: provider and model; groupBy=workflow: null. */
  provider: string | null;
  model: string | null;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Cost of the priced requests, decimal USD; null when no request of the row had pricing. */
  cost_usd: string | null;
  /** Requests whose cost is unknown (no pricing for the model): not counted in cost_usd. */
  unpriced_requests: number;
}

/** Thrown by read paths when the backing store cannot answer; the HTTP layer maps it to 503. */
export class StateUnavailableError extends Error {
  readonly code = 'STATE_UNAVAILABLE';
}

/** Thrown for a cursor the store did not issue (malformed or foreign); the HTTP layer maps it to 400. */
export class InvalidCursorError extends Error {
  readonly code = 'INVALID_CURSOR';
}

/** Thrown by queryUsage for an empty, reversed or too long range (see MAX_USAGE_RANGE_MS); the HTTP layer maps it to 400. */
export class UsageRangeError extends Error {
  readonly code = 'INVALID_USAGE_RANGE';
}

/** The longest range one usage query may cover (93 days: a quarter), so one query reads at most 2,232 hours. */
export const MAX_USAGE_RANGE_MS = 93 * 24 * 3_600_000;

export interface RuntimeState {
  readonly backend: 'memory' | 'redis';
  /**
   * The shared, auto-pipelined client (undefined in memory mode). Feature stores (limits, spend,
   * cache, sessions, jobs) build their Redis adapters on it, so commands issued in the same tick,
   * such as everything written at settle, travel in one round trip.
   */
  readonly redis: StateClient | undefined;
  /**
   * The connection for writes an answer waits on (stored responses, conversation turns): its own
   * socket, so such a write never queues behind a batch of settlements in flight on `redis`.
   * The same client as `redis` when the state was given only one.
   */
  readonly answerRedis: StateClient | undefined;
  /**
   * Records a finished request. Never throws and never blocks the caller: on Redis the write is
   * pipelined; if Redis is away it is buffered (bounded), retried, and what cannot be kept is
   * counted (switchyard_state_writes_dropped_total) and logged, never lost silently.
   */
  write(s: StateWrite): void;
  queryLogs(projectId: string, q: LogQuery): Promise<LogPage>;
  queryUsage(projectId: string, q: UsageQuery): Promise<UsageRow[]>;
  /** Resolves once every settle issued so far is written (or given up on). For tests and shutdown. */
  flush(): Promise<void>;
  /**
   * Stops taking writes; waits (at most `timeoutMs`, and never longer than the adapter's own limit)
   * for those in flight or buffered, then drops what is left, counted and logged.
   */
  close(timeoutMs?: number): Promise<void>;
}
