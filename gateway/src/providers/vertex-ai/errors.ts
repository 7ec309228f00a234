/**
 * Vertex AI errors: Google's `{"error": {code, message, status}}` from the platform (auth, quota,
 * routing), or, for Claude models, Anthropic's own error body passed through.
 */
import { isRetryableStatus, type UpstreamError } from '../../upstream/errors.ts';
import type { UpstreamResponse } from '../../upstream/http.ts';
import { extractAnthropicError } from '../anthropic/errors.ts';
import { statusError } from '../common.ts';
import { extractGeminiError } from '../gemini/errors.ts';

const extract = (body: unknown) => {
  const google = extractGeminiError(body);
  return google.message !== undefined ? google : extractAnthropicError(body);
};

/** Anthropic's overloaded/api errors stay retryable whatever status Vertex wraps them in. */
const retryable = (status: number, info: { code: string | undefined }) =>
  isRetryableStatus(status) || info.code === 'overloaded_error' || info.code === 'api_error';

export function vertexStatusError(res: UpstreamResponse): Promise<UpstreamError> {
  return statusError(res, extract, retryable);
}
