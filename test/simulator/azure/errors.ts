/**
 * Azure OpenAI error bodies. Validation errors come through in OpenAI's shape (the service proxies the
 * model API), while gateway-level failures (auth, throttling, routing) use { error: { code, message } }
 * with the status as a string code, as Azure API Management answers them.
 */
import type { ErrorReply } from '../exchange.ts';
import { openaiStatusError } from '../openai/errors.ts';

export function azureError(status: number, code: string, message: string): ErrorReply {
  return { status, body: { error: { code, message } } };
}

export const AZURE_AUTH_MESSAGE =
  'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.';

export function azureStatusError(status: number, message?: string): ErrorReply {
  switch (status) {
    case 401:
      return azureError(401, '401', message ?? AZURE_AUTH_MESSAGE);
    case 404:
      return azureError(
        404,
        'DeploymentNotFound',
        message ?? 'The API deployment for this resource does not exist.',
      );
    case 429:
      return azureError(
        429,
        '429',
        message ??
          'Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 1 second.',
      );
    default:
      return openaiStatusError(status, message);
  }
}
