/**
 * Gemini (Google API) error bodies: { error: { code, message, status } } with the canonical status name.
 * Credentials, as the real API answers them: no key → 403 PERMISSION_DENIED; a wrong key → 400
 * INVALID_ARGUMENT "API key not valid" with an ErrorInfo detail (reason API_KEY_INVALID).
 */
import type { ErrorReply, ValidationIssue } from '../exchange.ts';
import { bracketPath } from '../validate.ts';

const STATUS: Record<number, [string, string]> = {
  400: ['INVALID_ARGUMENT', 'Request contains an invalid argument.'],
  401: ['UNAUTHENTICATED', 'Request had invalid authentication credentials.'],
  403: ['PERMISSION_DENIED', 'The caller does not have permission'],
  404: ['NOT_FOUND', 'Requested entity was not found.'],
  409: ['ABORTED', 'The operation was aborted.'],
  429: ['RESOURCE_EXHAUSTED', 'Resource has been exhausted (e.g. check quota).'],
  499: ['CANCELLED', 'The operation was cancelled.'],
  500: [
    'INTERNAL',
    'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
  ],
  501: ['UNIMPLEMENTED', 'Method not implemented.'],
  503: ['UNAVAILABLE', 'The model is overloaded. Please try again later.'],
  504: ['DEADLINE_EXCEEDED', 'Deadline expired before operation could complete.'],
};

export function geminiError(
  status: number,
  message: string,
  statusName: string,
  details?: unknown[],
): ErrorReply {
  const error: Record<string, unknown> = { code: status, message, status: statusName };
  if (details) error.details = details;
  return { status, body: { error } };
}

export function geminiStatusError(status: number, message?: string): ErrorReply {
  const [name, text] =
    STATUS[status] ??
    (status >= 500 ? ['INTERNAL', 'Internal error'] : ['FAILED_PRECONDITION', 'Failed precondition']);
  return geminiError(status, message ?? text, name);
}

export const geminiMissingKey = (): ErrorReply =>
  geminiError(
    403,
    "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
    'PERMISSION_DENIED',
  );

export const geminiInvalidKey = (): ErrorReply =>
  geminiError(400, 'API key not valid. Please pass a valid API key.', 'INVALID_ARGUMENT', [
    {
      '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
      reason: 'API_KEY_INVALID',
      domain: 'googleapis.com',
      metadata: { service: 'generativelanguage.googleapis.com' },
    },
  ]);

export function geminiInvalidRequest(issues: ValidationIssue[], requestType: string): ErrorReply {
  const first = issues[0]!;
  const path = bracketPath(first.path);
  const last = first.path[first.path.length - 1];
  const message = first.missing
    ? `* ${requestType}.${path}: ${String(last)} is not specified`
    : `Invalid value at '${path}': ${first.message}`;
  return geminiError(400, message, 'INVALID_ARGUMENT');
}
