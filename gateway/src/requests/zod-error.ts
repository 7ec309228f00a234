import type { z } from 'zod';
import { GatewayError } from '../errors/index.ts';

const pathOf = (path: readonly PropertyKey[]): string =>
  path.map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i ? '.' : ''}${String(p)}`)).join('');

/** Turns the first zod issue into a 400 that names the field. */
export function invalidRequest(error: z.ZodError): GatewayError {
  const issue = error.issues[0];
  if (!issue) return new GatewayError('invalid_request', 'Invalid request body.');
  const param = pathOf(issue.path);
  const message =
    issue.code === 'invalid_type' && issue.input === undefined ? `${param} is required` : issue.message;
  return new GatewayError('invalid_request', param ? `Invalid ${param}: ${message}` : message, {
    param: param || undefined,
  });
}

export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body))
    throw new GatewayError('invalid_request', 'The request body must be a JSON object.', {
      hint: 'Send Content-Type: application/json with a JSON object body.',
    });
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw invalidRequest(parsed.error);
  return parsed.data;
}
