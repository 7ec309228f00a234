/** Gemini (Google API) error bodies `{"error":{"code","message","status"}}` → UpstreamError. */
import { streamErrorEvent, type UpstreamError } from '../../upstream/errors.ts';
import type { UpstreamResponse } from '../../upstream/http.ts';
import { isObject, type ProviderErrorInfo, statusError } from '../common.ts';

export function extractGeminiError(body: unknown): ProviderErrorInfo {
  // streamGenerateContent without alt=sse wraps errors in an array.
  const b = Array.isArray(body) ? body[0] : body;
  const err = isObject(b) ? b.error : undefined;
  if (!isObject(err)) return { message: undefined, code: undefined };
  return {
    message: typeof err.message === 'string' ? err.message : undefined,
    code: typeof err.status === 'string' ? err.status : undefined,
  };
}

export function geminiStatusError(res: UpstreamResponse): Promise<UpstreamError> {
  return statusError(res, extractGeminiError);
}

/** The HTTP status of each google.rpc.Code name, for error events that carry no numeric code. */
const RPC_STATUS: Record<string, number> = {
  INVALID_ARGUMENT: 400,
  FAILED_PRECONDITION: 400,
  OUT_OF_RANGE: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  ALREADY_EXISTS: 409,
  ABORTED: 409,
  RESOURCE_EXHAUSTED: 429,
  INTERNAL: 500,
  UNKNOWN: 500,
  DATA_LOSS: 500,
  NOT_IMPLEMENTED: 501,
  UNAVAILABLE: 503,
  DEADLINE_EXCEEDED: 504,
};

/** An `{"error": …}` chunk (or an `event: error`) inside a stream, with its `code` or its status name's. */
export function geminiStreamError(data: unknown): UpstreamError {
  const info = extractGeminiError(data);
  const b = Array.isArray(data) ? data[0] : data;
  const err = isObject(b) && isObject(b.error) ? b.error : undefined;
  const code = err?.code;
  const status =
    typeof code === 'number' && Number.isInteger(code) && code >= 400 && code <= 599
      ? code
      : info.code === undefined
        ? undefined
        : RPC_STATUS[info.code];
  const message = info.message ?? (typeof data === 'string' && data !== '' ? data : undefined);
  return streamErrorEvent({ status, message, code: info.code });
}
