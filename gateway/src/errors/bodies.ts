import type { ErrorCode, GatewayError } from './gateway-error.ts';

/** The error dialects: native, OpenAI's (chat completions and Responses) and Anthropic's (Messages). */
export type Surface = 'native' | 'compat' | 'responses' | 'messages';

/** Native (validation-shaped) body: `{error: <code>, message, hint?, param?}`. */
export interface NativeErrorBody {
  error: string;
  message: string;
  hint?: string;
  param?: string;
  /** Budget errors carry their fields (type, scope, cap_usd, spent_usd, ...). */
  [field: string]: unknown;
}

/** Compatible (OpenAI-shaped) body. */
export interface CompatErrorBody {
  error: {
    message: string;
    type: string;
    param: string | null;
    code: string | null;
    [field: string]: unknown;
  };
}

const COMPAT_TYPE: Record<ErrorCode, string> = {
  missing_api_key: 'authentication_error',
  invalid_api_key: 'authentication_error',
  insufficient_permission: 'permission_error',
  invalid_request: 'invalid_request_error',
  invalid_json: 'invalid_request_error',
  request_type_mismatch: 'invalid_request_error',
  unsupported_parameter: 'invalid_request_error',
  workflow_not_found: 'invalid_request_error',
  model_not_supported: 'invalid_request_error',
  feature_disabled: 'invalid_request_error',
  rate_limit_exceeded: 'rate_limit_error',
  session_not_found: 'invalid_request_error',
  response_not_found: 'invalid_request_error',
  conversation_not_found: 'invalid_request_error',
  conversation_locked: 'invalid_request_error',
  payload_too_large: 'invalid_request_error',
  unsupported_media_type: 'invalid_request_error',
  not_found: 'invalid_request_error',
  conflict: 'invalid_request_error',
  callback_conflict: 'invalid_request_error',
  callback_window_closed: 'invalid_request_error',
  invalid_workflow: 'invalid_request_error',
  request_timeout: 'invalid_request_error',
  uri_too_long: 'invalid_request_error',
  headers_too_large: 'invalid_request_error',
  upstream_error: 'api_error',
  service_unavailable: 'api_error',
  // The legacy codes live on as the type, so clients matching either name keep working (docs/api.md).
  workflow_budget_exceeded: 'budget_exceeded',
  project_budget_exceeded: 'budget_exceeded',
  workflow_budget_config_error: 'budget_config_error',
  project_budget_config_error: 'budget_config_error',
  guardrail_blocked: 'invalid_request_error',
};

/** Codes renamed on the compatible surface to what OpenAI clients expect. */
const COMPAT_CODE: Partial<Record<ErrorCode, string>> = {
  missing_api_key: 'invalid_api_key',
  workflow_not_found: 'model_not_found',
  invalid_request: 'invalid_request',
  not_found: 'unknown_url',
};

export function nativeErrorBody(err: GatewayError): NativeErrorBody {
  return {
    error: err.code,
    message: err.message,
    ...(err.hint ? { hint: err.hint } : {}),
    ...(err.param ? { param: err.param } : {}),
    // Budget errors: their fields (type, scope, cap_usd, ...), the same as on the compatible surface.
    ...(err.details ? { type: COMPAT_TYPE[err.code], ...err.details } : {}),
  };
}

export function compatErrorBody(err: GatewayError): CompatErrorBody {
  const param =
    err.param ?? (err.code === 'workflow_not_found' || err.code === 'model_not_supported' ? 'model' : null);
  return {
    error: {
      message: err.hint ? `${err.message} ${err.hint}` : err.message,
      type: COMPAT_TYPE[err.code],
      param,
      code: COMPAT_CODE[err.code] ?? err.code,
      ...err.details,
    },
  };
}

/** Anthropic-shaped body: `{type: "error", error: {type, message}}`. */
export interface MessagesErrorBody {
  type: 'error';
  error: { type: string; message: string; [field: string]: unknown };
}

/** Anthropic's error type for each status; budget refusals keep the type the other surfaces give them. */
function messagesType(err: GatewayError): string {
  if (err.details) return COMPAT_TYPE[err.code];
  switch (err.status) {
    case 401:
      return 'authentication_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
      return 'overloaded_error';
    default:
      return err.status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

export function messagesErrorBody(err: GatewayError): MessagesErrorBody {
  return {
    type: 'error',
    error: {
      type: messagesType(err),
      message: err.hint ? `${err.message} ${err.hint}` : err.message,
      code: err.code,
      ...(err.param ? { param: err.param } : {}),
      ...err.details,
    },
  };
}

export function errorBody(
  surface: Surface,
  err: GatewayError,
): NativeErrorBody | CompatErrorBody | MessagesErrorBody {
  if (surface === 'native') return nativeErrorBody(err);
  return surface === 'messages' ? messagesErrorBody(err) : compatErrorBody(err);
}
