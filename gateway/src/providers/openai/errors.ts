/** OpenAI-style error bodies → UpstreamError. Also used by azure-openai and openai-compatible. */
import { UpstreamError } from '../../upstream/errors.ts';
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

/** An `{"error": ...}` object sent inside an otherwise successful event stream. */
export function inStreamError(error: unknown): UpstreamError {
  const info = extractOpenAIError({ error });
  const message = info.message ?? 'upstream reported an error mid-stream';
  return new UpstreamError(`upstream stream error: ${message}`, {
    code: 'UPSTREAM_BAD_RESPONSE',
    status: 502,
    retryable: true,
    providerMessage: message,
    providerCode: info.code,
  });
}
