import type { IncomingHttpHeaders } from 'node:http';
import type { ChannelDoc } from '../async/channels.ts';
import type { DeliveryJob } from '../async/runner.ts';
import type { RequestRecord } from '../observability/request-record.ts';
import type { Finished } from '../pipeline/finished.ts';
import type { Prepared } from '../pipeline/prepare.ts';
import type { CanonicalResult, Usage } from '../providers/types.ts';
import type { RuntimeSlot } from '../snapshot/runtime.ts';

/**
 * The gateway's tracing, as the rest of the code sees it: a handful of calls at the places an
 * exchange starts, calls a provider and ends. Built once at the composition root; when tracing is
 * off every call is a no-op on a shared constant (./off.ts) and no OpenTelemetry module is loaded.
 */

/**
 * A span's W3C Trace Context: the `traceparent` and `tracestate` headers a provider request or a
 * webhook carries, and what a queued job keeps to continue the trace of the request that started it.
 */
export interface TraceContext {
  traceparent: string;
  tracestate?: string;
}

/** What the server span reads from an HTTP request (a Fastify request has all of it). */
export interface HttpRequestView {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  ip: string;
  protocol: string;
  routeOptions: { url?: string | undefined };
  raw: { httpVersion: string };
}

/** A failure as an attempt span records it (an UpstreamError has these fields). */
export interface AttemptFailure {
  code: string;
  message: string;
  status?: number | undefined;
}

/** The client span of one attempt of the failover chain: one provider call. */
export interface AttemptTrace {
  /** Sent to the provider as headers; undefined when tracing is off. */
  readonly context: TraceContext | undefined;
  /**
   * The provider answered (a stream: it ended well). `usage` is what the provider reported, if it
   * did; `ttfcMs` is a stream's time to its first chunk, from the start of this attempt.
   */
  answered(result: CanonicalResult, usage: Usage | undefined, ttfcMs?: number): void;
  failed(e: AttemptFailure): void;
}

/** The spans of one exchange's failover chain. */
export interface ChainTrace {
  attempt(slot: RuntimeSlot): AttemptTrace;
  /** A slot the chain did not call (its guard refused it): an event on the exchange's span. */
  skipped(slot: RuntimeSlot, reason: string): void;
}

/** The span of one exchange: an HTTP request's server span, an async job's, a session summary's. */
export interface ExchangeTrace {
  /** 32 hex digits, written to the request log; null when tracing is off. */
  readonly traceId: string | null;
  /** This span's context, to carry in job data; undefined when off. */
  readonly context: TraceContext | undefined;
  /** The chain of a prepared request of `projectId`. */
  chain(p: Prepared, projectId: string, stream: boolean): ChainTrace;
  /** A span of work of our own that belongs to this exchange (a session summary). */
  child(name: string): ExchangeTrace;
  /** Ends the span with the figures the settle has. Only the first call counts. */
  end(f: Finished, record: RequestRecord): void;
}

/** The span of one webhook delivery attempt. */
export interface WebhookTrace {
  readonly traceId: string | null;
  /** Sent to the receiver as headers; undefined when tracing is off. */
  readonly context: TraceContext | undefined;
  /**
   * Ends it with how the attempt went: `delivered`, `retry`, `dead_letter`, `disabled`; `status` is
   * the receiver's (0 without an answer); `error` for anything but a delivery. Only the first call counts.
   */
  end(outcome: string, status: number, error?: { type: string; message: string }): void;
}

/** The span of a pipeline workflow's callback, or of its window closing. */
export interface CallbackTrace {
  /** Webhooks it emits are spans under it. */
  readonly context: TraceContext | undefined;
  fail(errorType: string, message: string): void;
  end(): void;
}

export interface Tracing {
  readonly enabled: boolean;
  /** The server span of an HTTP request, continuing the caller's `traceparent` when it sent one. */
  request(req: HttpRequestView): ExchangeTrace;
  /** The span of an async job's run, in the trace of the request that was accepted. */
  job(carried: TraceContext | undefined, channelId: string): ExchangeTrace;
  /** A webhook delivery attempt, under the span that emitted the event (its `trace`). */
  webhook(job: DeliveryJob): WebhookTrace;
  /**
   * A pipeline callback (`link`: the callback request's own span, which has a trace of its own) or
   * its window closing, in the trace of the accepted request (the channel's `trace`).
   */
  callback(kind: 'callback' | 'callback_timeout', channel: ChannelDoc, link?: TraceContext): CallbackTrace;
  /** Exports every span ended so far (tests; shutdown flushes too). */
  flush(): Promise<void>;
  /** Flushes and stops exporting. */
  close(): Promise<void>;
}
