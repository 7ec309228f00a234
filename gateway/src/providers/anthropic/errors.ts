/** Anthropic error bodies (`{"type":"error","error":{"type","message"}}`) → UpstreamError. */
import { isRetryableStatus, UpstreamError } from '../../upstream/errors.ts';
import type { UpstreamResponse } from '../../upstream/http.ts';
import { isObject, type ProviderErrorInfo, statusError } from '../common.ts';

export function extractAnthropicError(body: unknown): ProviderErrorInfo {
  const err = isObject(body) ? body.error : undefined;
  if (!isObject(err)) return { message: undefined, code: undefined };
  return {
    message: typeof err.message === 'string' ? err.message : undefined,
    code: typeof err.type === 'string' ? err.type : undefined,
  };
}

/** 429, 5xx and 529 (`overloaded_error`) are retryable; so is an `overloaded_error`/`api_error` body on any status. */
function retryable(status: number, info: ProviderErrorInfo): boolean {
  return isRetryableStatus(status) || info.code === 'overloaded_error' || info.code === 'api_error';
}

export function anthropicStatusError(res: UpstreamResponse): Promise<UpstreamError> {
  return statusError(res, extractAnthropicError, retryable);
}

const STREAM_ERROR_STATUS: Record<string, number> = {
  overloaded_error: 529,
  rate_limit_error: 429,
  api_error: 500,
  invalid_request_error: 400,
};

/** An `event: error` inside a stream (e.g. overloaded mid-answer). */
export function anthropicStreamError(data: unknown): UpstreamError {
  const info = extractAnthropicError(data);
  const message = info.message ?? 'upstream reported an error mid-stream';
  const status = (info.code && STREAM_ERROR_STATUS[info.code]) || 502;
  return new UpstreamError(`upstream stream error: ${message}`, {
    code: 'UPSTREAM_STATUS',
    status,
    retryable: retryable(status, info),
    providerMessage: message,
    providerCode: info.code,
  });
}
