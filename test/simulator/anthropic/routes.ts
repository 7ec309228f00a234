/**
 * Anthropic: POST /v1/messages with `x-api-key` and `anthropic-version` (both required), plus
 * POST /v1/messages/count_tokens.
 */
import type { Exchange, ProviderApi } from '../exchange.ts';
import { newId, tokens } from '../generate.ts';
import { sendJson } from '../respond.ts';
import { anthropicError, anthropicInvalidRequest, anthropicStatusError } from './errors.ts';
import { handleMessages } from './messages.ts';
import { messagesRequest } from './schemas.ts';

const countTokensRequest = messagesRequest.omit({ max_tokens: true });

async function handleCountTokens(ex: Exchange): Promise<void> {
  const body = ex.body as { messages: unknown; system?: unknown };
  return sendJson(ex, 200, { input_tokens: tokens(JSON.stringify([body.system ?? '', body.messages])) });
}

export const anthropicApi: ProviderApi = {
  name: 'anthropic',
  route(method, url) {
    if (method !== 'POST') return undefined;
    if (url.pathname === '/v1/messages')
      return { body: 'json', schema: messagesRequest, handle: handleMessages };
    if (url.pathname === '/v1/messages/count_tokens') {
      return { body: 'json', schema: countTokensRequest, handle: handleCountTokens };
    }
    return undefined;
  },
  precheck(req, _url, apiKey) {
    const key = req.headers['x-api-key'];
    if (typeof key !== 'string' || key.trim() === '') {
      return anthropicError(401, 'authentication_error', 'x-api-key header is required');
    }
    if (apiKey !== undefined && key !== apiKey)
      return anthropicError(401, 'authentication_error', 'invalid x-api-key');
    if (!req.headers['anthropic-version']) {
      return anthropicError(400, 'invalid_request_error', 'anthropic-version: header is required');
    }
    return undefined;
  },
  error: (status, message) => anthropicStatusError(status, message),
  invalidJson: (detail) =>
    anthropicError(
      400,
      'invalid_request_error',
      `There was an error parsing the body of your request: ${detail}`,
    ),
  invalidRequest: (issues) => anthropicInvalidRequest(issues),
  notFound: () => anthropicError(404, 'not_found_error', 'Not Found'),
  headers: () => ({ 'request-id': newId('req_') }),
};
