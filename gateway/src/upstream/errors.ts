export type UpstreamErrorCode =
  | 'UPSTREAM_STATUS'
  | 'UPSTREAM_TIMEOUT'
  | 'UPSTREAM_CONNECT'
  | 'UPSTREAM_BAD_RESPONSE'
  | 'UPSTREAM_STREAM_CUT'
  | 'UPSTREAM_UNSUPPORTED'
  | 'UPSTREAM_ABORTED';

export interface UpstreamErrorInit {
  code: UpstreamErrorCode;
  status?: number | undefined;
  retryable: boolean;
  providerMessage?: string;
  /** Upstream-suggested delay before retrying (Retry-After / retry-after-ms), when given. */
  retryAfterMs?: number | undefined;
  /** Provider's own error type/code (e.g. `rate_limit_error`, `RESOURCE_EXHAUSTED`), when given. */
  providerCode?: string | undefined;
  cause?: unknown;
}

export class UpstreamError extends Error {
  code: UpstreamErrorCode;
  status: number | undefined;
  retryable: boolean;
  providerMessage: string;
  retryAfterMs: number | undefined;
  providerCode: string | undefined;

  constructor(message: string, init: UpstreamErrorInit) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'UpstreamError';
    this.code = init.code;
    this.status = init.status;
    this.retryable = init.retryable;
    this.providerMessage = init.providerMessage ?? '';
    this.retryAfterMs = init.retryAfterMs;
    this.providerCode = init.providerCode;
  }
}

/** 408 (request timeout), 429 and every 5xx (including Anthropic's 529 "overloaded") are worth retrying. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status === 408 || status >= 500;
}

export function unsupported(what: string): UpstreamError {
  return new UpstreamError(what, { code: 'UPSTREAM_UNSUPPORTED', retryable: false, providerMessage: what });
}

export function badResponse(message: string, status?: number, cause?: unknown): UpstreamError {
  return new UpstreamError(message, {
    code: 'UPSTREAM_BAD_RESPONSE',
    status: status ?? 502,
    retryable: true,
    providerMessage: message,
    cause,
  });
}

export function streamCut(message: string, cause?: unknown): UpstreamError {
  return new UpstreamError(message, {
    code: 'UPSTREAM_STREAM_CUT',
    status: 502,
    retryable: true,
    providerMessage: message,
    cause,
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
