import type { Logger } from 'pino';
import { microsToUsd } from '#contract';
import { countRequest, type FinishedRequest, requestLogLine } from '../observability/log-line.ts';
import type { GatewayMetrics } from '../observability/metrics.ts';
import type { RequestLogEntry, RuntimeState, UsageIncrement } from '../state/types.ts';
import type { Progress } from './exchange.ts';
import { endTrace } from './exchange-end.ts';
import { type Ending, type Finished, finishedOf, recordOf } from './finished.ts';

export interface SettleDeps {
  metrics: GatewayMetrics;
  state: RuntimeState;
  logger: Logger;
  /** Wall clock for log times and usage buckets (injected by tests). */
  now: () => number;
}

/** Settles one finished exchange: metrics, the log line, the request-log entry and the usage. */
export type Settle = (f: Finished) => void;

const HOUR_MS = 3_600_000;

export function requestLogEntry(
  f: FinishedRequest,
  now: number,
  details?: Record<string, unknown>,
): RequestLogEntry {
  const r = f.record;
  const outcome = r.outcome ?? (f.status < 400 ? 'success' : 'client_error');
  const usage = r.usage
    ? {
        prompt_tokens: r.usage.prompt_tokens ?? 0,
        ...(r.usage.completion_tokens !== undefined ? { completion_tokens: r.usage.completion_tokens } : {}),
        total_tokens: r.usage.total_tokens ?? 0,
      }
    : null;
  const saved =
    r.costSavedMicros !== undefined
      ? { cost_saved_usd: r.costSavedMicros === null ? null : microsToUsd(r.costSavedMicros) }
      : undefined;
  return {
    request_log_id: f.id,
    type: r.logType ?? 'request',
    time: new Date(now).toISOString(),
    project_id: r.project ?? '',
    api_key_id: r.keyId ?? null,
    surface: r.surface === 'other' ? 'native' : r.surface,
    method: f.method,
    path: f.path,
    workflow: r.workflow ?? null,
    channel_id: r.channelId ?? null,
    session_id: r.sessionId ?? null,
    status: outcome === 'success' ? 'success' : 'error',
    outcome,
    http_status: f.status,
    error_code: r.errorCode ?? null,
    used_provider: r.usedProvider ?? null,
    used_model: r.usedModel ?? null,
    attempts: r.attempts ?? [],
    usage,
    // Nothing consumed (refused, or every provider failed) costs nothing; unknown pricing stays unknown.
    cost_usd: r.costMicros === null ? null : microsToUsd(r.costMicros ?? 0),
    cache: r.cache ?? null,
    stream: r.stream === true,
    duration_ms: Math.round(f.durationMs * 1000) / 1000,
    ttft_ms: r.ttftMs === undefined ? null : Math.round(r.ttftMs * 1000) / 1000,
    customer_data: r.customerData ?? {},
    test_mode: r.testMode === true,
    trace_id: r.traceId ?? null,
    ...(saved || details || r.guardrails
      ? { details: { ...saved, ...(r.guardrails ? { guardrails: r.guardrails } : {}), ...details } }
      : {}),
    ...(r.bodies ? { bodies: r.bodies } : {}),
  };
}

/**
 * Usage counts what reached a provider and came back with usage; refusals and failures are in the
 * logs. Every settled request of an application (with or without usage) also adds its quality
 * figures: error, cache hit, failover and duration, read by the analytics.
 */
export function usageIncrement(f: FinishedRequest, now: number): UsageIncrement | undefined {
  const r = f.record;
  const quality =
    (r.logType ?? 'request') === 'request' && r.surface !== 'internal'
      ? {
          durationMs: f.durationMs,
          error: (r.outcome ?? (f.status < 400 ? 'success' : 'client_error')) !== 'success',
          cacheHit: r.cache === 'hit',
          failover: (r.attempts?.length ?? 0) > 1,
        }
      : undefined;
  const used = r.usage && r.usedProvider ? r.usage : undefined;
  if (!used && !quality) return undefined;
  return {
    hourStartSec: Math.floor(now / HOUR_MS) * 3600,
    workflow: r.workflow ?? '',
    provider: r.usedProvider ?? '',
    model: r.usedModel ?? '',
    requests: used ? 1 : 0,
    prompt_tokens: used?.prompt_tokens ?? 0,
    completion_tokens: used?.completion_tokens ?? 0,
    total_tokens: used?.total_tokens ?? 0,
    cost_micros: used ? (r.costMicros ?? null) : 0,
    ...(quality ? { quality } : {}),
  };
}

/**
 * The settle stage, the same for HTTP requests, async jobs and session summaries: once per
 * exchange, after its answer. Counts it, writes the one log line, and hands the request-log entry
 * and the usage to the state layer, which writes them in one pipelined round trip without making
 * anyone wait. Calls of our own (`internal`) are logged as entries only.
 */
export function createSettle(deps: SettleDeps): Settle {
  return (f) => {
    const line: FinishedRequest = {
      id: f.id,
      method: f.method,
      path: f.path,
      status: f.httpStatus,
      durationMs: f.durationMs,
      record: recordOf(f),
    };
    endTrace(f, line.record);
    if (f.surface !== 'internal') {
      countRequest(deps.metrics, line);
      // Building the line allocates a dozen objects: skipped when info lines are not written.
      if (deps.logger.isLevelEnabled('info')) deps.logger.info(requestLogLine(line));
    }
    const project = f.project;
    if (!project || f.surface === 'other') return;
    const now = deps.now();
    deps.state.write({
      projectId: project.config.id,
      log: requestLogEntry(line, now, f.details),
      usage: usageIncrement(line, now),
      logCap: project.config.requestLogs.maxEntries,
    });
  };
}

/**
 * How the code that owns a request settles it, the same for HTTP requests, async jobs and summary
 * calls: with what it saw of the end and what the pipeline established (`progress`, when it opened an
 * exchange). The owner calls it once (an HTTP request's `accounted` flag keeps it so). A stream is
 * settled once it has ended, its usage and cost known, also when its client went away.
 */
export function settleEnd(
  settle: Settle,
  ending: Ending,
  startedAt: number,
  progress: Progress | undefined,
): void {
  const durationMs = performance.now() - startedAt;
  const result = progress?.result;
  if (result?.kind === 'streaming')
    void result.ended.then((end) => settle(finishedOf(ending, durationMs, progress, end)));
  else settle(finishedOf(ending, durationMs, progress));
}
