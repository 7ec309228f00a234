/** Anthropic error bodies (`{"type":"error","error":{"type","message"}}`) → UpstreamError. */
import { isRetryableStatus, streamErrorEvent, type UpstreamError } from '../../upstream/errors.ts';
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

/** The HTTP status each Anthropic error type is documented with. */
const ERROR_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

const statusOfType = (code: string | undefined): number | undefined =>
  code === undefined ? undefined : ERROR_STATUS[code];

/**
 * The error type in the body outranks an unexpected status: `overloaded_error` or `api_error` on a
 * 4xx (seen behind proxies) is still worth the next slot.
 */
function retryable(status: number, info: ProviderErrorInfo): boolean {
  const typed = statusOfType(info.code);
  return isRetryableStatus(status) || (typed !== undefined && isRetryableStatus(typed));
}

export function anthropicStatusError(res: UpstreamResponse): Promise<UpstreamError> {
  return statusError(res, extractAnthropicError, retryable);
}

/** An `event: error` inside a stream (e.g. overloaded mid-answer), with its type's status. */
export function anthropicStreamError(data: unknown): UpstreamError {
  const info = extractAnthropicError(data);
  const message = info.message ?? (typeof data === 'string' && data !== '' ? data : undefined);
  return streamErrorEvent({ status: statusOfType(info.code), message, code: info.code });
}
