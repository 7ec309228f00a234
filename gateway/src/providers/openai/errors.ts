/** OpenAI-style error bodies → UpstreamError. Also used by azure-openai and openai-compatible. */
import { streamErrorEvent, type UpstreamError } from '../../upstream/errors.ts';
import type { UpstreamResponse } from '../../upstream/http.ts';
import { isObject, type ProviderErrorInfo, statusError } from '../common.ts';

/**
 * `{"error": {"message", "type", "code"}}` (OpenAI, Azure, most compatible servers);
 * also `{"error": "text"}` (Ollama, vLLM), `{"message": ...}` and `{"detail": ...}` (FastAPI-based servers).
 */
export function extractOpenAIError(body: unknown): ProviderErrorInfo {
  if (!isObject(body)) return { message: undefined, code: undefined };
  const err = body.error;
  if (typeof err === 'string') return { message: err, code: undefined };
  if (isObject(err)) {
    const code =
      typeof err.code === 'string' ? err.code : typeof err.type === 'string' ? err.type : undefined;
    return { message: typeof err.message === 'string' ? err.message : undefined, code };
  }
  if (typeof body.message === 'string') return { message: body.message, code: undefined };
  if (typeof body.detail === 'string') return { message: body.detail, code: undefined };
  if (body.detail !== undefined) return { message: JSON.stringify(body.detail), code: undefined };
  return { message: undefined, code: undefined };
}

export function openaiStatusError(res: UpstreamResponse): Promise<UpstreamError> {
  return statusError(res, extractOpenAIError);
}

/**
 * The HTTP status an OpenAI-style error type or code stands for (OpenAI's own names, and the
 * exception class names vLLM and other Python servers put in `type`), lowercased.
 */
const ERROR_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  context_length_exceeded: 400,
  badrequesterror: 400,
  invalid_api_key: 401,
  authentication_error: 401,
  authenticationerror: 401,
  permission_error: 403,
  permissiondeniederror: 403,
  not_found_error: 404,
  model_not_found: 404,
  notfounderror: 404,
  rate_limit_error: 429,
  rate_limit_exceeded: 429,
  ratelimiterror: 429,
  insufficient_quota: 429,
  server_error: 500,
  internal_server_error: 500,
  internalservererror: 500,
  api_error: 500,
  service_unavailable: 503,
  overloaded: 503,
  timeout: 504,
};

const httpStatus = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isInteger(v) && v >= 400 && v <= 599 ? v : undefined;

/**
 * An error reported inside an OpenAI-style event stream: a chunk `{"error": …}`, or an
 * `event: error` whose data is the error itself (`{"type", "code", "message"}`) or plain text.
 * The status is a numeric `status`/`code` when the server sends one (vLLM does), else what the
 * error's code or type stands for.
 */
export function openaiStreamError(data: unknown): UpstreamError {
  const err = isObject(data) && data.error !== undefined ? data.error : data;
  const info = extractOpenAIError({ error: err });
  let status: number | undefined;
  if (isObject(err)) {
    status = httpStatus(err.status) ?? httpStatus(err.code);
    for (const name of [err.code, err.type])
      if (status === undefined && typeof name === 'string') status = ERROR_STATUS[name.toLowerCase()];
  }
  return streamErrorEvent({ status, message: info.message, code: info.code });
}
