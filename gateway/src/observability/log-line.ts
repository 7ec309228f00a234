import type { GatewayMetrics } from './metrics.ts';
import type { RequestRecord } from './request-record.ts';

export interface FinishedRequest {
  id: string;
  /** Null for exchanges that are not HTTP requests (session summaries). */
  method: string | null;
  path: string | null;
  status: number;
  durationMs: number;
  record: RequestRecord;
}

/**
 * The one JSON log line per request. It never holds the API key or message bodies: only ids,
 * routing, usage and the workflow's cache-field values (which the workflow opts into).
 */
export function requestLogLine(f: FinishedRequest): Record<string, unknown> {
  const r = f.record;
  return {
    msg: 'request',
    request_log_id: f.id,
    method: f.method,
    path: f.path,
    status: f.status,
    duration_ms: Math.round(f.durationMs * 1000) / 1000,
    surface: r.surface,
    ...(r.project ? { project: r.project } : {}),
    ...(r.keyId ? { api_key: r.keyId } : {}),
    ...(r.workflow !== undefined ? { workflow: r.workflow } : {}),
    ...(r.usedProvider ? { used_provider: r.usedProvider, used_model: r.usedModel } : {}),
    ...(r.attempts
      ? {
          attempts: r.attempts.map((a) => ({
            provider: a.provider,
            model: a.model,
            status: a.status,
            ...(a.reason ? { reason: a.reason.message } : {}),
          })),
        }
      : {}),
    ...(r.usage ? { usage: r.usage } : {}),
    ...(r.customerData && Object.keys(r.customerData).length ? { cache_fields: r.customerData } : {}),
    ...(r.outcome ? { outcome: r.outcome } : {}),
    ...(r.stream ? { stream: true } : {}),
    ...(r.ttftMs !== undefined ? { ttft_ms: Math.round(r.ttftMs * 1000) / 1000 } : {}),
    ...(r.testMode ? { test_mode: true } : {}),
    ...(r.traceId ? { trace_id: r.traceId } : {}),
  };
}

/** Counts a finished request; label values are bounded by the snapshot (projects, workflows, providers). */
export function countRequest(m: GatewayMetrics, f: FinishedRequest): void {
  const r = f.record;
  const outcome = r.outcome ?? (f.status < 400 ? 'success' : 'client_error');
  if (r.surface === 'other') return;
  m.requests.inc({
    surface: r.surface,
    project: r.project ?? '',
    workflow: r.workflow ?? '',
    provider: r.usedProvider ?? '',
    model: r.usedModel ?? '',
    outcome,
  });
  m.duration.observe({ surface: r.surface, outcome }, f.durationMs / 1000);
  if (r.ttftMs !== undefined && r.usedProvider)
    m.ttft.observe(
      { surface: r.surface, provider: r.usedProvider, model: r.usedModel ?? '' },
      r.ttftMs / 1000,
    );
  if (r.usage && r.usedProvider) {
    const labels = {
      project: r.project ?? '',
      workflow: r.workflow ?? '',
      provider: r.usedProvider,
      model: r.usedModel ?? '',
    };
    if (r.usage.prompt_tokens) m.tokens.inc({ ...labels, direction: 'prompt' }, r.usage.prompt_tokens);
    if (r.usage.completion_tokens)
      m.tokens.inc({ ...labels, direction: 'completion' }, r.usage.completion_tokens);
  }
  const attempts = r.attempts ?? [];
  attempts.forEach((a, i) => {
    if (a.duration_ms !== undefined)
      m.upstream.observe({ provider: a.provider, model: a.model, result: a.status }, a.duration_ms / 1000);
    // A failover is a failed or skipped slot that handed the request on to the next one.
    if (a.status !== 'success' && i < attempts.length - 1)
      m.failovers.inc({
        project: r.project ?? '',
        workflow: r.workflow ?? '',
        provider: a.provider,
        model: a.model,
        reason: a.reason?.code ?? a.status,
      });
  });
}
