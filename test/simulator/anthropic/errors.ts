/** Anthropic error bodies: { type: "error", error: { type, message }, request_id }. */
import type { ErrorReply, ValidationIssue } from '../exchange.ts';
import { newId } from '../generate.ts';
import { dottedPath } from '../validate.ts';

const TYPES: Record<number, [string, string]> = {
  400: ['invalid_request_error', 'Invalid request.'],
  401: ['authentication_error', 'invalid x-api-key'],
  402: ['billing_error', 'Your credit balance is too low to access the Anthropic API.'],
  403: ['permission_error', 'Your API key does not have permission to use the specified resource.'],
  404: ['not_found_error', 'The requested resource could not be found.'],
  413: ['request_too_large', 'Request exceeds the maximum allowed number of bytes.'],
  429: ['rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit.'],
  500: ['api_error', 'Internal server error'],
  504: ['timeout_error', 'Request timed out'],
  529: ['overloaded_error', 'Overloaded'],
};

export function anthropicError(status: number, type: string, message: string): ErrorReply {
  return { status, body: { type: 'error', error: { type, message }, request_id: newId('req_') } };
}

export function anthropicStatusError(status: number, message?: string): ErrorReply {
  const known = TYPES[status];
  const [type, text] =
    known ??
    (status >= 500 ? ['api_error', 'Internal server error'] : ['invalid_request_error', 'Invalid request.']);
  return anthropicError(status, type, message ?? text);
}

export function anthropicInvalidRequest(issues: ValidationIssue[]): ErrorReply {
  const first = issues[0]!;
  const path = dottedPath(first.path);
  return anthropicError(
    400,
    'invalid_request_error',
    `${path}: ${first.missing ? 'Field required' : first.message}`,
  );
}
