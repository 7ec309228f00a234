import { usageFigures } from '../domain/usage.ts';
import type { GatewayError } from '../errors/index.ts';
import type { RequestOutcome, RequestRecord } from '../observability/request-record.ts';
import type { RuntimeProject } from '../snapshot/runtime.ts';
import type { RequestLogType } from '../state/types.ts';
import type { ExchangeTrace } from '../tracing/types.ts';
import type { Progress, Surface } from './exchange.ts';
import type { Prepared } from './prepare.ts';
import type { Answer, Failure, FinishedResult, Notes, PipelineResult, StreamEnd } from './result.ts';

/**
 * What the code that owns a request saw of its end (the HTTP layer, the async job handler, the
 * summary): who it was for, how it was answered and how it counts. The pipeline's part comes from
 * the exchange's Progress, when one was opened.
 */
export interface Ending {
  id: string;
  /** `other`: routes outside both surfaces (reads, the console), which get no request-log entry. */
  surface: Surface | 'other';
  type: RequestLogType;
  method: string | null;
  path: string | null;
  httpStatus: number;
  project: RuntimeProject | undefined;
  keyId: string | undefined;
  /** A refusal the transport answered (authentication, the body, a route's own check). */
  error: GatewayError | undefined;
  /** The client went away before its answer was complete. */
  aborted: boolean;
  channelId?: string | null | undefined;
  /** The request body, kept only for projects that ask for bodies in request logs. */
  body?: unknown;
  details?: Record<string, unknown> | undefined;
  /** Its span, which the settle ends. */
  trace: ExchangeTrace;
}

/**
 * An exchange that ended, as its transport saw it (an HTTP request, an async job, a summary call):
 * the one input of settle. Everything in it is a value the pipeline or the transport produced.
 */
export interface Finished extends Ending {
  durationMs: number;
  prepared: Prepared | undefined;
  notes: Notes;
  /** How the pipeline ended, a stream's end included; undefined when it never ran or did not finish. */
  result: FinishedResult | undefined;
  stream: boolean;
}

/**
 * The one constructor of a Finished: the owner's `ending`, the pipeline's `progress` (undefined for
 * a request that never opened an exchange: refused before it, a read, a 404) and a stream's `end`.
 */
export function finishedOf(
  ending: Ending,
  durationMs: number,
  progress: Progress | undefined,
  end?: StreamEnd,
): Finished {
  return {
    id: ending.id,
    surface: ending.surface,
    type: ending.type,
    method: ending.method,
    path: ending.path,
    httpStatus: ending.httpStatus,
    durationMs,
    project: ending.project,
    keyId: ending.keyId,
    prepared: progress?.prepared,
    notes: progress?.notes ?? {},
    result: finalResult(progress?.result, end),
    error: ending.error,
    aborted: ending.aborted,
    stream: progress?.stream ?? false,
    channelId: ending.channelId,
    body: ending.body,
    details: ending.details,
    trace: ending.trace,
  };
}

/** A pipeline result with a stream's end folded in: the stream answered, or it failed. */
export function finalResult(result: PipelineResult | undefined, end?: StreamEnd): FinishedResult | undefined {
  if (result?.kind !== 'streaming') return result;
  if (!end) return undefined;
  const { prepared, notes } = result;
  return end.ok
    ? { kind: 'answered', prepared, notes, answer: end.answer }
    : { kind: 'failed', prepared, notes, failure: end.failure };
}

/** How a refusal counts: rate-limit and budget refusals are outcomes of their own. */
export function refusalOutcome(ge: GatewayError): RequestOutcome {
  if (ge.status >= 500) return 'unavailable';
  if (ge.code === 'rate_limit_exceeded') return 'rate_limited';
  if (ge.status === 402) return 'budget_exceeded';
  return 'client_error';
}

function answered(r: RequestRecord, a: Answer, stream: boolean, bodies: boolean): void {
  r.attempts = a.attempts;
  r.usedProvider = a.slot?.provider ?? null;
  r.usedModel = a.slot?.model ?? null;
  // A stream whose provider reported no usage has none (its cost is what was reserved).
  if (!stream || a.usage || !a.slot) r.usage = usageFigures(a.result);
  r.costMicros = a.costMicros;
  r.outcome = 'success';
  if (a.ttftMs !== undefined) r.ttftMs = a.ttftMs;
  if (bodies && r.bodies) {
    const res = a.result;
    r.bodies.response =
      res.kind === 'speech'
        ? { format: res.format }
        : stream && a.slot && (res.kind === 'chat' || res.kind === 'completion')
          ? { content: res.kind === 'chat' ? res.content : res.text }
          : res;
  }
}

function failed(r: RequestRecord, f: Failure): void {
  r.attempts = f.attempts;
  r.errorCode = f.code;
  if (f.slot) {
    // A stream that broke after it started: what it consumed counts.
    r.usedProvider = f.slot.provider;
    r.usedModel = f.slot.model;
    if (f.usage) r.usage = { ...f.usage };
    r.costMicros = f.costMicros;
    r.outcome = f.aborted ? 'aborted' : 'stream_error';
  } else r.outcome = f.aborted ? 'aborted' : 'upstream_error';
  if (f.ttftMs !== undefined) r.ttftMs = f.ttftMs;
}

/** The request record of a finished exchange: built once, here, from its values. */
export function recordOf(f: Finished): RequestRecord {
  const p = f.prepared;
  const bodies = f.project?.config.requestLogs.bodies === true;
  const r: RequestRecord = {
    logType: f.type,
    surface: f.surface,
    ...(f.project ? { project: f.project.config.id } : {}),
    ...(f.keyId ? { keyId: f.keyId } : {}),
    ...(f.channelId ? { channelId: f.channelId } : {}),
    ...(f.stream ? { stream: true } : {}),
  };
  const traceId = f.trace.traceId;
  if (traceId) r.traceId = traceId;
  if (p) {
    r.workflow = p.workflowName;
    r.customerData = p.customerData;
    r.testMode = p.plan.testMode;
  }
  const n = f.notes;
  if (n.sessionId) r.sessionId = n.sessionId;
  if (n.cache) r.cache = n.cache;
  if (n.costSavedMicros !== undefined) r.costSavedMicros = n.costSavedMicros;
  // With guardrails on, the body as the client sent it is not kept: the checked request is.
  if (bodies && p)
    r.bodies = {
      request: n.guardrails ? (n.guardrails.refusedRequest ?? p.request) : (f.body ?? null),
      response: null,
    };
  if (n.guardrails && (n.guardrails.findings.length || n.guardrails.failures.length))
    r.guardrails = {
      findings: n.guardrails.findings.map((x) => ({
        rule: x.rule,
        label: x.label,
        mode: x.mode,
        direction: x.direction,
        hash: x.hash,
      })),
      ...(n.guardrails.failures.length ? { failures: n.guardrails.failures } : {}),
    };
  const res = f.result;
  if (res?.kind === 'failed') failed(r, res.failure);
  else {
    if (res?.kind === 'answered') answered(r, res.answer, f.stream, bodies);
    if (res?.kind === 'refused' && res.attempts) r.attempts = res.attempts;
    const error = f.error ?? (res?.kind === 'refused' ? res.error : undefined);
    if (error) {
      r.outcome = refusalOutcome(error);
      r.errorCode = error.code;
    }
  }
  if (f.aborted) r.outcome = 'aborted';
  return r;
}
