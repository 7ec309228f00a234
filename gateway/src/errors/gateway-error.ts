/**
 * Every failure the gateway answers with is a GatewayError with a stable code. How a code looks on
 * the wire (native `{error, message, hint}` or compatible `{error: {message, type, code, param}}`)
 * is decided in one place: ./bodies.ts.
 */
export type ErrorCode =
  | 'missing_api_key'
  | 'invalid_api_key'
  | 'insufficient_permission'
  | 'invalid_request'
  | 'invalid_json'
  | 'request_type_mismatch'
  | 'unsupported_parameter'
  | 'workflow_not_found'
  | 'model_not_supported'
  | 'feature_disabled'
  | 'rate_limit_exceeded'
  | 'session_not_found'
  | 'response_not_found'
  | 'conversation_not_found'
  | 'conversation_locked'
  | 'payload_too_large'
  | 'unsupported_media_type'
  | 'not_found'
  | 'conflict'
  | 'callback_conflict'
  | 'callback_window_closed'
  | 'invalid_workflow'
  | 'request_timeout'
  | 'uri_too_long'
  | 'headers_too_large'
  | 'upstream_error'
  | 'service_unavailable'
  | 'workflow_budget_exceeded'
  | 'project_budget_exceeded'
  | 'workflow_budget_config_error'
  | 'project_budget_config_error'
  | 'guardrail_blocked';

export const STATUS_OF: Record<ErrorCode, number> = {
  missing_api_key: 401,
  invalid_api_key: 401,
  insufficient_permission: 403,
  invalid_request: 400,
  invalid_json: 400,
  request_type_mismatch: 400,
  unsupported_parameter: 400,
  workflow_not_found: 404,
  model_not_supported: 400,
  feature_disabled: 503,
  rate_limit_exceeded: 429,
  session_not_found: 422,
  response_not_found: 404,
  conversation_not_found: 404,
  conversation_locked: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  not_found: 404,
  conflict: 409,
  callback_conflict: 409,
  callback_window_closed: 410,
  invalid_workflow: 422,
  request_timeout: 408,
  uri_too_long: 414,
  headers_too_large: 431,
  upstream_error: 502,
  service_unavailable: 503,
  workflow_budget_exceeded: 402,
  project_budget_exceeded: 402,
  workflow_budget_config_error: 422,
  project_budget_config_error: 422,
  guardrail_blocked: 400,
};

export interface GatewayErrorInit {
  hint?: string | undefined;
  /** The request field at fault, e.g. `temperature` or `messages[0].role`. */
  param?: string | undefined;
  retryAfterSeconds?: number | undefined;
  /** Response headers the error carries (rate-limit state: `x-ratelimit-*`, `retry-after-ms`). */
  headers?: Readonly<Record<string, string>> | undefined;
  /**
   * Fields added to the `error` object on both surfaces (budget errors: `scope`, `cap_usd`, ...);
   * `type` here replaces the compatible surface's type.
   */
  details?: Readonly<Record<string, unknown>> | undefined;
  cause?: unknown;
}

export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly hint: string | undefined;
  readonly param: string | undefined;
  readonly retryAfterSeconds: number | undefined;
  readonly headers: Readonly<Record<string, string>> | undefined;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(code: ErrorCode, message: string, init: GatewayErrorInit = {}) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.status = STATUS_OF[code];
    this.hint = init.hint;
    this.param = init.param;
    this.retryAfterSeconds = init.retryAfterSeconds;
    this.headers = init.headers;
    this.details = init.details;
  }
}
