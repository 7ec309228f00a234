/** Bedrock Runtime error answers: `{"message"}` with the exception name in `x-amzn-ErrorType`. */
import { randomUUID } from 'node:crypto';
import type { ErrorReply, ValidationIssue } from '../exchange.ts';
import { dottedPath } from '../validate.ts';

export function bedrockError(status: number, type: string, message: string): ErrorReply {
  return {
    status,
    body: { message },
    headers: { 'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/` },
  };
}

const STATUS: Record<number, [string, string]> = {
  400: ['ValidationException', 'Malformed input request, please reformat your input and try again.'],
  403: ['AccessDeniedException', "You don't have access to the model with the specified model ID."],
  404: [
    'ResourceNotFoundException',
    'Could not resolve the foundation model from the provided model identifier.',
  ],
  408: ['ModelTimeoutException', 'Model has timed out in processing the request.'],
  424: ['ModelErrorException', 'The model returned an error while processing the request.'],
  429: ['ThrottlingException', 'Too many requests, please wait before trying again.'],
  500: ['InternalServerException', 'The server encountered an internal error.'],
  503: ['ServiceUnavailableException', 'Bedrock is unable to process your request.'],
};

export function bedrockStatusError(status: number, message?: string): ErrorReply {
  const [type, text] =
    STATUS[status] ??
    (status >= 500
      ? ['InternalServerException', 'Internal error']
      : ['ValidationException', 'Invalid request']);
  return bedrockError(status, type, message ?? text);
}

export function bedrockInvalidRequest(issues: ValidationIssue[]): ErrorReply {
  const first = issues[0]!;
  return bedrockError(
    400,
    'ValidationException',
    `1 validation error detected: Value at '${dottedPath(first.path)}' failed to satisfy constraint: ${first.message}`,
  );
}

export const bedrockHeaders = (): Record<string, string> => ({ 'x-amzn-requestid': randomUUID() });
