import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { LogPage, LogQuery, RequestLogEntry, RuntimeState, UsageIncrement } from '#gateway/state/types';

export const silent: Logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

/** A logger whose JSON lines the test can read. */
export function capturingLogger(): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines };
}

export const projectId = (label: string): string => `${label}-${randomUUID().slice(0, 8)}`;

/** A request-log entry with every field set (optional ones included), overridable per test. */
export function entry(project: string, n: number, over: Partial<RequestLogEntry> = {}): RequestLogEntry {
  return {
    request_log_id: `rl_${project}_${n}`,
    type: 'request',
    time: new Date(Date.UTC(2025, 2, 1, 12, 0, 0) + n * 1000).toISOString(),
    project_id: project,
    api_key_id: 'team-a/key-1',
    surface: 'native',
    method: 'POST',
    path: '/api/v1/ai/chat',
    workflow: 'summarise',
    channel_id: `ch-${n % 3}`,
    session_id: `s-${n % 4}`,
    status: 'success',
    outcome: 'success',
    http_status: 200,
    error_code: null,
    used_provider: 'openai-main',
    used_model: 'gpt-4o-mini',
    attempts: [
      {
        provider: 'anthropic-main',
        model: 'claude-3-5-haiku',
        status: 'error',
        reason: { message: 'upstream 529 overloaded', status: 529, code: 'overloaded' },
        duration_ms: 41.5,
      },
      { provider: 'openai-main', model: 'gpt-4o-mini', status: 'success', duration_ms: 312 },
    ],
    usage: { prompt_tokens: 120, completion_tokens: 48, total_tokens: 168 },
    cost_usd: '0.000047',
    cache: 'miss',
    stream: true,
    duration_ms: 360.25,
    ttft_ms: 88,
    customer_data: { tenant: 'acme', tags: ['a', 'b'], nested: { ok: true, n: 3 }, none: null },
    test_mode: false,
    trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
    details: { attempt: 2, url: 'https://hooks.example/x', headers: { 'x-a': '1' } },
    bodies: { request: { messages: [{ role: 'user', content: 'hé ✓ "quoted"\n' }] }, response: 'plain text' },
    ...over,
  };
}

export function usage(over: Partial<UsageIncrement> = {}): UsageIncrement {
  return {
    hourStartSec: Date.UTC(2025, 2, 1, 12) / 1000,
    workflow: 'summarise',
    provider: 'openai-main',
    model: 'gpt-4o-mini',
    requests: 1,
    prompt_tokens: 100,
    completion_tokens: 20,
    total_tokens: 120,
    cost_micros: 1500,
    ...over,
  };
}

/** Every page of a query, in order; fails on a page bigger than the limit. */
export async function allPages(
  state: RuntimeState,
  project: string,
  q: Omit<LogQuery, 'cursor'>,
): Promise<{ entries: RequestLogEntry[]; pages: LogPage[] }> {
  const pages: LogPage[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 10_000; i++) {
    const page = await state.queryLogs(project, cursor === undefined ? q : { ...q, cursor });
    if (page.entries.length > q.limit) throw new Error(`page of ${page.entries.length} > limit ${q.limit}`);
    pages.push(page);
    if (page.next_cursor === null) return { entries: pages.flatMap((p) => p.entries), pages };
    cursor = page.next_cursor;
  }
  throw new Error('pagination did not end');
}

/** The UTC hour the outage tests write usage into, and a usage query over it. */
export const HOUR = Date.UTC(2025, 8, 1, 10) / 1000;
export const usageRange = {
  from: HOUR * 1000,
  to: HOUR * 1000 + 3_600_000,
  groupBy: 'workflow',
  granularity: 'hour',
} as const;

/** A metric's value in `registry` for the series with these labels (0 when absent). */
export async function metric(
  registry: Registry,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const m = registry.getSingleMetric(name);
  if (!m) return 0;
  const { values } = await m.get();
  const v = values.find((x) => Object.entries(labels).every(([k, want]) => x.labels[k] === want));
  return v?.value ?? 0;
}

/** Settles requests `from`..`to - 1` of `project`: a log entry and usage in HOUR each. */
export function settleMany(state: RuntimeState, project: string, from: number, to: number): void {
  for (let n = from; n < to; n++)
    state.write({
      projectId: project,
      log: entry(project, n),
      // One in ten an error, one in five a failover: the quality figures ride the same write.
      usage: usage({
        hourStartSec: HOUR,
        quality: { durationMs: 40, error: n % 10 === 0, cacheHit: false, failover: n % 5 === 0 },
      }),
      logCap: 10_000,
    });
}
