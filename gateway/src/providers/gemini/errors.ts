/** Gemini (Google API) error bodies `{"error":{"code","message","status"}}` → UpstreamError. */
import { isRetryableStatus, UpstreamError } from '../../upstream/errors.ts';
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

/** An `{"error": …}` object sent as a stream event. */
export function geminiStreamError(body: unknown): UpstreamError {
  const info = extractGeminiError(body);
  const err = isObject(body) && isObject(body.error) ? body.error : undefined;
  const status = typeof err?.code === 'number' ? err.code : 502;
  const message = info.message ?? 'upstream reported an error mid-stream';
  return new UpstreamError(`upstream stream error: ${message}`, {
    code: 'UPSTREAM_STATUS',
    status,
    retryable: isRetryableStatus(status),
    providerMessage: message,
    providerCode: info.code,
  });
}
