/**
 * Bedrock error answers → UpstreamError. HTTP errors carry `{"message"}` and the exception name in
 * the `x-amzn-errortype` header; stream exceptions arrive as event-stream frames (see
 * eventstream.ts), with the name in `:exception-type`.
 */
import { isRetryableStatus, streamErrorEvent, type UpstreamError } from '../../upstream/errors.ts';
import type { UpstreamResponse } from '../../upstream/http.ts';
import { isObject, type ProviderErrorInfo, statusError } from '../common.ts';

/** The HTTP status each Bedrock Runtime exception is documented with (lower-cased names). */
const EXCEPTION_STATUS: Record<string, number> = {
  validationexception: 400,
  accessdeniedexception: 403,
  unrecognizedclientexception: 403,
  invalidsignatureexception: 403,
  expiredtokenexception: 403,
  resourcenotfoundexception: 404,
  modeltimeoutexception: 408,
  modelerrorexception: 424,
  modelstreamerrorexception: 424,
  throttlingexception: 429,
  modelnotreadyexception: 429,
  servicequotaexceededexception: 400,
  internalserverexception: 500,
  serviceunavailableexception: 503,
};

/**
 * Failures of the model or of capacity that another slot may not have: worth the next slot even
 * where the status alone (424, 400) says the request was at fault.
 */
const RETRYABLE = new Set([
  'modelerrorexception',
  'modelstreamerrorexception',
  'modelnotreadyexception',
  'servicequotaexceededexception',
]);

function extract(body: unknown): ProviderErrorInfo {
  if (!isObject(body)) return { message: undefined, code: undefined };
  const m = body.message ?? body.Message;
  return { message: typeof m === 'string' ? m : undefined, code: undefined };
}

export function bedrockStatusError(res: UpstreamResponse): Promise<UpstreamError> {
  const header = res.headers['x-amzn-errortype'];
  const code = (Array.isArray(header) ? header[0] : header)?.split(':')[0];
  return statusError(
    res,
    (body) => ({ ...extract(body), code }),
    (status, info) =>
      isRetryableStatus(status) || (info.code !== undefined && RETRYABLE.has(info.code.toLowerCase())),
  );
}

/** An exception frame inside ConverseStream (data: `{type, message}`), with its type's status. */
export function bedrockStreamError(data: unknown): UpstreamError {
  const d = isObject(data) ? data : {};
  const type = typeof d.type === 'string' ? d.type : undefined;
  const status = type === undefined ? undefined : EXCEPTION_STATUS[type.toLowerCase()];
  const report = streamErrorEvent({
    status,
    message: typeof d.message === 'string' ? d.message : undefined,
    code: type,
  });
  if (type !== undefined && RETRYABLE.has(type.toLowerCase())) report.retryable = true;
  return report;
}
