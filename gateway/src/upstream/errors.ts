export type UpstreamErrorCode =
  | 'UPSTREAM_STATUS'
  | 'UPSTREAM_TIMEOUT'
  | 'UPSTREAM_CONNECT'
  | 'UPSTREAM_BAD_RESPONSE'
  | 'UPSTREAM_STREAM_CUT'
  | 'UPSTREAM_UNSUPPORTED'
  | 'UPSTREAM_ABORTED';

/** How one class of upstream failure is handled; see UPSTREAM_ERRORS. */
export interface UpstreamErrorClass {
  /**
   * Whether the failover chain moves on to the next slot. `by-status`: decided by the upstream
   * status (isRetryableStatus: 408, 429 and 5xx are, other 4xx are not).
   */
  retryable: boolean | 'by-status';
  /**
   * HTTP status reported to clients (native meta.http_status, the compatible error's status).
   * `upstream-4xx`: the provider's own 4xx other than 429 is passed on (the request was at fault);
   * any other upstream status is reported as 502.
   */
  httpStatus: number | 'upstream-4xx';
  /** Upstream status recorded on the error (error.details.status) when its raiser names none. */
  status: number | undefined;
  description: string;
}

/**
 * Every upstream failure, classified once. UpstreamError consults this table for `retryable`,
 * its default `status` and `httpStatus`, so no adapter decides them on its own.
 *
 * Mid-stream rule, the same for every adapter: an error the provider *reports* inside an event
 * stream (an SSE `event: error`, or an `{"error": …}` event: OpenAI, Azure and compatible servers,
 * Anthropic's `event: error`, Gemini's error chunk) is UPSTREAM_STATUS, exactly as if the provider
 * had answered with that error as an HTTP status: the status is the one the event carries (Gemini's
 * `error.code`), else the one the provider's error type stands for (e.g. Anthropic
 * `overloaded_error` 529, OpenAI `rate_limit_exceeded` 429; each adapter's errors.ts holds its
 * table), else 502. So an overloaded provider is retryable and an invalid request is not, whether
 * the provider said so before or after the first byte. UPSTREAM_STREAM_CUT is kept for streams that
 * stop without saying why.
 */
export const UPSTREAM_ERRORS: Readonly<Record<UpstreamErrorCode, UpstreamErrorClass>> = {
  UPSTREAM_STATUS: {
    retryable: 'by-status',
    httpStatus: 'upstream-4xx',
    status: 502,
    description:
      'The provider reported an error: a non-2xx HTTP status, or an error event inside an event stream (see the mid-stream rule above).',
  },
  UPSTREAM_TIMEOUT: {
    retryable: true,
    httpStatus: 504,
    status: 504,
    description:
      'No connection within timeouts.connectMs, no response headers within timeouts.firstByteMs, or the call (body included) past timeouts.totalMs.',
  },
  UPSTREAM_CONNECT: {
    retryable: true,
    httpStatus: 502,
    status: 502,
    description: 'The connection failed before any response: refused, reset, DNS or TLS failure.',
  },
  UPSTREAM_BAD_RESPONSE: {
    retryable: true,
    httpStatus: 502,
    status: 502,
    description:
      'A 2xx answer that cannot be used: invalid JSON, missing fields, a malformed stream event, JSON where an event stream was expected, or an answer that fails its structured-output schema.',
  },
  UPSTREAM_STREAM_CUT: {
    retryable: true,
    httpStatus: 502,
    status: 502,
    description:
      "The event stream stopped without an error event: the connection dropped, or the stream ended before the provider's terminal event or without content.",
  },
  UPSTREAM_UNSUPPORTED: {
    retryable: false,
    httpStatus: 502,
    status: undefined,
    description:
      'The provider cannot serve this request (request kind, parameter or content), so nothing was sent. Not retryable on the same slot; the chain still tries the next slot, whose provider may serve it. When no slot can, the client is refused with 400, not told of a provider failure.',
  },
  UPSTREAM_ABORTED: {
    retryable: false,
    httpStatus: 502,
    status: undefined,
    description: 'The client went away; the upstream call was abandoned. Nobody is left to answer.',
  },
};

export interface UpstreamErrorInit {
  code: UpstreamErrorCode;
  /** The upstream status; required meaning for UPSTREAM_STATUS, else defaults from UPSTREAM_ERRORS. */
  status?: number | undefined;
  /**
   * Only where the provider's error body outranks its status (Anthropic's `overloaded_error` on
   * an unexpected status); otherwise leave it out and UPSTREAM_ERRORS decides.
   */
  retryable?: boolean | undefined;
  providerMessage?: string;
  /** Upstream-suggested delay before retrying (Retry-After / retry-after-ms), when given. */
  retryAfterMs?: number | undefined;
  /** Provider's own error type/code (e.g. `rate_limit_error`, `RESOURCE_EXHAUSTED`), when given. */
  providerCode?: string | undefined;
  /** UPSTREAM_UNSUPPORTED: the request parameter the slot cannot honour, as the client spelled it. */
  param?: string | undefined;
  cause?: unknown;
}

/** Whether a failure of this code (and upstream status) moves the failover chain on. */
export function isRetryable(code: UpstreamErrorCode, status: number | undefined): boolean {
  const r = UPSTREAM_ERRORS[code].retryable;
  return r === 'by-status' ? status !== undefined && isRetryableStatus(status) : r;
}

/** HTTP status reported to clients for a failure of this code (and upstream status). */
export function clientHttpStatus(code: UpstreamErrorCode, status: number | undefined): number {
  const h = UPSTREAM_ERRORS[code].httpStatus;
  if (h !== 'upstream-4xx') return h;
  return status !== undefined && status >= 400 && status < 500 && status !== 429 ? status : 502;
}

export class UpstreamError extends Error {
  code: UpstreamErrorCode;
  status: number | undefined;
  retryable: boolean;
  providerMessage: string;
  retryAfterMs: number | undefined;
  providerCode: string | undefined;
  param: string | undefined;

  constructor(message: string, init: UpstreamErrorInit) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'UpstreamError';
    this.code = init.code;
    this.status = init.status ?? UPSTREAM_ERRORS[init.code].status;
    this.retryable = init.retryable ?? isRetryable(init.code, this.status);
    this.providerMessage = init.providerMessage ?? '';
    this.retryAfterMs = init.retryAfterMs;
    this.providerCode = init.providerCode;
    this.param = init.param;
  }

  /** HTTP status reported to clients (UPSTREAM_ERRORS). */
  get httpStatus(): number {
    return clientHttpStatus(this.code, this.status);
  }
}

/** 408 (request timeout), 429 and every 5xx (including Anthropic's 529 "overloaded") are worth retrying. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status === 408 || status >= 500;
}

export function unsupported(what: string, param?: string): UpstreamError {
  return new UpstreamError(what, { code: 'UPSTREAM_UNSUPPORTED', providerMessage: what, param });
}

export function badResponse(message: string, status?: number, cause?: unknown): UpstreamError {
  return new UpstreamError(message, {
    code: 'UPSTREAM_BAD_RESPONSE',
    status,
    providerMessage: message,
    cause,
  });
}

export function streamCut(message: string, cause?: unknown): UpstreamError {
  return new UpstreamError(message, { code: 'UPSTREAM_STREAM_CUT', providerMessage: message, cause });
}

/** What an adapter read from an error event inside an event stream. */
export interface StreamErrorReport {
  /** The status the event carries or the provider's error type stands for; undefined when neither. */
  status: number | undefined;
  message: string | undefined;
  /** The provider's error type/code, e.g. `overloaded_error`. */
  code: string | undefined;
}

/** An error event inside an event stream, classified by the mid-stream rule of UPSTREAM_ERRORS. */
export function streamErrorEvent(report: StreamErrorReport): UpstreamError {
  const message = report.message ?? 'upstream reported an error mid-stream';
  return new UpstreamError(`upstream stream error: ${message}`, {
    code: 'UPSTREAM_STATUS',
    status: report.status,
    providerMessage: message,
    providerCode: report.code,
  });
}

/** Parses `retry-after-ms` or `retry-after` (seconds or HTTP date). */
export function parseRetryAfter(
  headers: Record<string, string | string[] | undefined>,
  now = Date.now(),
): number | undefined {
  const ms = first(headers['retry-after-ms']);
  if (ms !== undefined) {
    const n = Number(ms);
    if (Number.isFinite(n) && n >= 0) return n;
  }
  const ra = first(headers['retry-after']);
  if (ra === undefined) return undefined;
  const secs = Number(ra);
  if (Number.isFinite(secs) && secs >= 0) return secs * 1000;
  const at = Date.parse(ra);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
