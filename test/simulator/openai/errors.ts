/** OpenAI error bodies: { error: { message, type, param, code } }, worded like the real API. */
import type { ErrorReply, ValidationIssue } from '../exchange.ts';
import { bracketPath } from '../validate.ts';

export function openaiError(
  status: number,
  message: string,
  type: string,
  code: string | null = null,
  param: string | null = null,
): ErrorReply {
  return { status, body: { error: { message, type, param, code } } };
}

/** Errors for injected statuses: the bodies OpenAI sends for them. */
export function openaiStatusError(status: number, message?: string): ErrorReply {
  switch (status) {
    case 400:
      return openaiError(400, message ?? 'Invalid request.', 'invalid_request_error');
    case 401:
      return openaiError(
        401,
        message ?? 'Incorrect API key provided.',
        'invalid_request_error',
        'invalid_api_key',
      );
    case 403:
      return openaiError(
        403,
        message ?? 'You are not allowed to sample from this model',
        'invalid_request_error',
      );
    case 404:
      return openaiError(
        404,
        message ?? 'The model does not exist or you do not have access to it.',
        'invalid_request_error',
        'model_not_found',
      );
    case 429:
      return openaiError(
        429,
        message ?? 'Rate limit reached for requests. Please try again later.',
        'requests',
        'rate_limit_exceeded',
      );
    case 503:
      return openaiError(
        503,
        message ?? 'The engine is currently overloaded, please try again later.',
        'server_error',
      );
    default:
      return openaiError(
        status,
        message ??
          (status >= 500
            ? 'The server had an error while processing your request. Sorry about that!'
            : `Request failed with status ${status}.`),
        status >= 500 ? 'server_error' : 'invalid_request_error',
      );
  }
}

export function openaiInvalidJson(): ErrorReply {
  return openaiError(
    400,
    "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)",
    'invalid_request_error',
  );
}

/** Multipart issues come as fields.<name> / files.<name>; OpenAI names the form field itself. */
function paramOf(issue: ValidationIssue): string {
  const path = issue.path[0] === 'fields' || issue.path[0] === 'files' ? issue.path.slice(1) : issue.path;
  return bracketPath(path);
}

export function openaiInvalidRequest(issues: ValidationIssue[]): ErrorReply {
  const first = issues[0]!;
  const param = paramOf(first);
  if (first.missing) {
    return openaiError(
      400,
      `Missing required parameter: '${param}'.`,
      'invalid_request_error',
      'missing_required_parameter',
      param,
    );
  }
  return openaiError(
    400,
    `Invalid value for '${param}': ${first.message}`,
    'invalid_request_error',
    'invalid_value',
    param,
  );
}

export function openaiNotFound(method: string, pathname: string): ErrorReply {
  return openaiError(404, `Invalid URL (${method} ${pathname})`, 'invalid_request_error');
}
