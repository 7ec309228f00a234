import type { IncomingHttpHeaders } from 'node:http';
import type { ProviderType } from '#contract';

/**
 * The gateway's tracing, as the rest of the code sees it: a handful of calls at the places an
 * exchange starts, calls a provider and ends. Built once at the composition root; when tracing is
 * off every call is a no-op on a shared constant (./off.ts) and no OpenTelemetry module is loaded.
 *
 * Tracing sits below everything that calls it: its calls take plain values, shaped here as the spans
 * read them, and of the gateway it imports only modules that import nothing back (the config error,
 * the OpenAI-compatible hosts), so no import cycle runs through it (test/architecture). The
 * gateway's own objects (a RuntimeSlot, a Prepared request, a DeliveryJob, a ChannelDoc) have these
 * fields and are passed as they are; the settle's figures are gathered for it (pipeline/exchange-end.ts).
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

/** What a request asks for, as `gen_ai.operation.name` tells it. */
export type RequestKind = 'chat' | 'completion' | 'embedding' | 'image' | 'transcription' | 'speech';

/** Where a provider is reached (an UpstreamTarget has these): `gen_ai.provider.name`, `server.*`. */
export interface ProviderEndpoint {
  readonly type: ProviderType;
  readonly baseURL: string;
}

/** A slot of the failover chain (a RuntimeSlot has these). */
export interface SlotRef {
  /** `primary`, `backup-1`, ... */
  readonly slot: string;
  readonly provider: string;
  readonly model: string;
  readonly target: ProviderEndpoint;
}

/** What the attempt spans read of a prepared request (a Prepared has it). */
export interface ChainRequest {
  readonly request: {
    readonly kind: RequestKind;
    // The sampling settings of a chat or completion request.
    readonly max_tokens?: number | undefined;
    readonly temperature?: number | undefined;
    readonly top_p?: number | undefined;
    readonly seed?: number | undefined;
    readonly stop?: string[] | undefined;
  };
  readonly workflowName: string | null;
  readonly plan: { readonly testMode: boolean };
}

/** Token counts as a provider reports them (a Usage has these). */
export interface TokenUsage {
  readonly prompt_tokens?: number | undefined;
  readonly completion_tokens?: number | undefined;
  readonly cache_read_tokens?: number | undefined;
  readonly cache_write_tokens?: number | undefined;
}

/** What an attempt span reads of a provider's answer (a CanonicalResult has what its kind has). */
export interface AnswerFields {
  readonly kind: RequestKind;
  readonly id?: string | undefined;
  readonly model?: string | undefined;
  readonly finish_reason?: string | undefined;
}

/** The request-log figures an exchange's span repeats (a RequestRecord has them). */
export interface ExchangeFigures {
  readonly project?: string | undefined;
  readonly keyId?: string | undefined;
  readonly workflow?: string | null | undefined;
  readonly usedProvider?: string | null | undefined;
  readonly usedModel?: string | null | undefined;
  readonly usage?: TokenUsage | undefined;
  readonly outcome?: string | undefined;
  readonly errorCode?: string | undefined;
  readonly testMode?: boolean | undefined;
  readonly sessionId?: string | null | undefined;
  readonly channelId?: string | null | undefined;
  readonly cache?: string | undefined;
}

/** How an exchange ended, as the settle has it: the last attributes of its span. */
export interface ExchangeEnd {
  /** Its request-log id. */
  readonly id: string;
  /** The status it answered with: an attribute of an HTTP exchange's span, an error from 500 on. */
  readonly status: number;
  /** It answered over HTTP (a job or a summary does not). */
  readonly http: boolean;
  /** What was asked, once the request was prepared. */
  readonly request?:
    | {
        readonly kind: RequestKind;
        /** The model the client asked for. */
        readonly model: string;
        readonly stream: boolean;
        /** The provider of the slot that answered (or whose stream broke), else of the first slot. */
        readonly endpoint: ProviderEndpoint | undefined;
      }
    | undefined;
  /** The slot that answered. */
  readonly slot?: string | undefined;
  readonly figures: ExchangeFigures;
}

/** What a webhook attempt's span reads of its delivery job (a DeliveryJob has these). */
export interface WebhookJob {
  readonly id: string;
  readonly projectId: string;
  readonly url: string;
  readonly event: string;
  readonly attempt: number;
  readonly replay: number;
  /** The span that emitted the event. */
  readonly trace?: TraceContext | undefined;
}

/** What a callback's span reads of its channel (a ChannelDoc has these). */
export interface CallbackChannel {
  readonly channel_id: string;
  readonly project_id: string;
  /** The accepting request's span. */
  readonly trace?: TraceContext | undefined;
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
  answered(result: AnswerFields, usage: TokenUsage | undefined, ttfcMs?: number): void;
  failed(e: AttemptFailure): void;
}

/** The spans of one exchange's failover chain. */
export interface ChainTrace {
  attempt(slot: SlotRef): AttemptTrace;
  /** A slot the chain did not call (its guard refused it): an event on the exchange's span. */
  skipped(slot: SlotRef, reason: string): void;
}

/** The span of one exchange: an HTTP request's server span, an async job's, a session summary's. */
export interface ExchangeTrace {
  /** 32 hex digits, written to the request log; null when tracing is off. */
  readonly traceId: string | null;
  /** This span's context, to carry in job data; undefined when off. */
  readonly context: TraceContext | undefined;
  /** The chain of a prepared request of `projectId`. */
  chain(p: ChainRequest, projectId: string, stream: boolean): ChainTrace;
  /** A span of work of our own that belongs to this exchange (a session summary). */
  child(name: string): ExchangeTrace;
  /** An MCP tool call made for this exchange: `execute_tool`, under the GenAI conventions. */
  tool(call: ToolCallView): ToolTrace;
  /** Ends the span with the figures the settle has. Only the first call counts. */
  end(end: ExchangeEnd): void;
}

/** What the `execute_tool` span reads of an MCP tool call. */
export interface ToolCallView {
  /** The prefixed name the client called. */
  readonly name: string;
  /** The MCPServer that serves it. */
  readonly server: string;
  /** The JSON-RPC id of the client's `tools/call`. */
  readonly callId: string | number | undefined;
  readonly sessionId: string | undefined;
}

/** The span of one MCP tool call. */
export interface ToolTrace {
  /** Ends it: `success`, `tool_error`, `timeout`, ...; `error` for anything but a success. Only the first call counts. */
  end(outcome: string, error?: string): void;
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
  webhook(job: WebhookJob): WebhookTrace;
  /**
   * A pipeline callback (`link`: the callback request's own span, which has a trace of its own) or
   * its window closing, in the trace of the accepted request (the channel's `trace`).
   */
  callback(
    kind: 'callback' | 'callback_timeout',
    channel: CallbackChannel,
    link?: TraceContext,
  ): CallbackTrace;
  /** Exports every span ended so far (tests; shutdown flushes too). */
  flush(): Promise<void>;
  /** Flushes and stops exporting. */
  close(): Promise<void>;
}
