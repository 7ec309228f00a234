/** Cohere error bodies (`{"id", "message"}`) → UpstreamError; stream errors by status. */
import { streamErrorEvent, type UpstreamError } from '../../upstream/errors.ts';
import type { UpstreamResponse } from '../../upstream/http.ts';
import { isObject, type ProviderErrorInfo, statusError } from '../common.ts';

export function extractCohereError(body: unknown): ProviderErrorInfo {
  if (!isObject(body)) return { message: undefined, code: undefined };
  const message = typeof body.message === 'string' ? body.message : undefined;
  return { message, code: undefined };
}

export function cohereStatusError(res: UpstreamResponse): Promise<UpstreamError> {
  return statusError(res, extractCohereError);
}

/** An error inside a Cohere stream: `event: error` or a message-end with finish_reason ERROR. */
export function cohereStreamError(data: unknown): UpstreamError {
  const info = extractCohereError(data);
  const d = isObject(data) ? data : {};
  const status = typeof d.status === 'number' && d.status >= 400 && d.status <= 599 ? d.status : undefined;
  const message = info.message ?? (typeof data === 'string' && data !== '' ? data : undefined);
  return streamErrorEvent({ status, message, code: undefined });
}
