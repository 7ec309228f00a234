import { type UsageFigures, usageFigures } from '../domain/usage.ts';
import { firedList } from '../guardrails/note.ts';
import type { Exchange } from '../pipeline/exchange.ts';
import type { Answer, PipelineResult, StreamEnd } from '../pipeline/result.ts';
import type { NativeMeta } from './native.ts';

/** A result as `meta` and the headers describe it; a finished stream with its end. */
export type Described = Exclude<PipelineResult, { kind: 'refused' }>;

function answerOf(result: Described, end: StreamEnd | undefined): Answer | undefined {
  if (result.kind === 'answered') return result.answer;
  if (result.kind === 'streaming' && end?.ok) return end.answer;
  return undefined;
}

function usedSlot(result: Described) {
  if (result.kind === 'failed') return undefined;
  return result.kind === 'streaming' ? result.slot : result.answer.slot;
}

/**
 * `meta` and the `x-service-*` headers, built in one place from the pipeline's result, for every
 * encoder (native raw, wrapped, SSE, compatible, async results).
 */
export function nativeMeta(ex: Exchange, result: Described, end?: StreamEnd): NativeMeta {
  const p = result.prepared;
  const failed = result.kind === 'failed';
  const slot = usedSlot(result);
  const answer = answerOf(result, end);
  let usage: UsageFigures = {};
  if (answer && (answer.usage || result.kind === 'answered')) usage = usageFigures(answer.result);
  const attempts =
    result.kind === 'failed'
      ? result.failure.attempts
      : result.kind === 'streaming'
        ? result.attempts
        : result.answer.attempts;
  return {
    status: failed ? 'error' : 'success',
    http_status: failed ? result.failure.httpStatus : 200,
    workflow: p.workflowName,
    requested_provider: p.requestedProvider,
    requested_model: p.requestedModel,
    used_provider: slot?.provider ?? null,
    used_model: slot?.model ?? null,
    duration_ms: Math.round(performance.now() - ex.startedAt),
    usage,
    structured_output: p.plan.structured !== undefined || p.plan.json,
    attempts,
    ...(result.notes.sessionId ? { session_id: result.notes.sessionId } : {}),
    ...(result.notes.cache ? { cache: result.notes.cache } : {}),
    request_log_id: ex.id,
  };
}

/** The SSE `metadata` event that opens a native stream. */
export function streamMetadata(
  ex: Exchange,
  result: Extract<Described, { kind: 'streaming' }>,
): Record<string, unknown> {
  return {
    workflow: result.prepared.workflowName,
    session_id: result.notes.sessionId ?? null,
    used_provider: result.slot?.provider ?? null,
    used_model: result.slot?.model ?? null,
    request_log_id: ex.id,
  };
}

/** The `x-service-*` headers, and the `x-ratelimit-*` ones of a rate-limited project or key. */
export function serviceHeaders(
  ex: Exchange,
  result: Described,
  opts: { duration: boolean },
): Record<string, string> {
  const slot = usedSlot(result);
  const n = result.notes;
  const h: Record<string, string> = {
    'x-service-workflow': result.prepared.workflowName ?? '',
    'x-service-used-provider': slot?.provider ?? '',
    'x-service-used-model': slot?.model ?? '',
    'x-service-request-log-id': ex.id,
  };
  if (opts.duration) h['x-service-duration-ms'] = String(Math.round(performance.now() - ex.startedAt));
  if (n.cache) h['x-service-cache'] = n.cache;
  if (n.sessionId) h['x-service-session-id'] = n.sessionId;
  if (n.rateLimitHeaders) Object.assign(h, n.rateLimitHeaders);
  const fired = n.guardrails ? firedList(n.guardrails) : '';
  if (fired) h['x-service-guardrails'] = fired;
  return h;
}
