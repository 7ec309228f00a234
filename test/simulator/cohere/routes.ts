/** Cohere API v2: POST /v2/chat and /v2/embed with `Authorization: Bearer`; errors `{id, message}`. */
import { randomUUID } from 'node:crypto';
import type { ErrorReply, Exchange, ProviderApi } from '../exchange.ts';
import { embedding, tokens } from '../generate.ts';
import { sendJson } from '../respond.ts';
import { dottedPath } from '../validate.ts';
import { handleChat } from './chat.ts';
import { chatRequest, embedRequest } from './schemas.ts';

const cohereError = (status: number, message: string): ErrorReply => ({
  status,
  body: { id: randomUUID(), message },
});

const MESSAGES: Record<number, string> = {
  400: 'invalid request',
  401: 'invalid api token',
  402: 'Please add or update your payment method.',
  404: 'model not found',
  422: 'unprocessable entity',
  429: 'You are using a Trial key, which is limited to 10 API calls / minute. You can continue to use the Trial key for free or upgrade to a Production key with higher rate limits.',
  499: 'request cancelled',
  500: 'internal server error, this has been reported to our developers',
  503: 'service unavailable',
  504: 'gateway timeout',
};

async function handleEmbed(ex: Exchange): Promise<void> {
  const req = ex.body as { texts: string[]; output_dimension?: number; embedding_types?: string[] };
  const vectors = req.texts.map((t) => embedding(t, req.output_dimension ?? 1024));
  return sendJson(ex, 200, {
    id: randomUUID(),
    embeddings: { float: vectors },
    texts: req.texts,
    meta: {
      api_version: { version: '2' },
      billed_units: { input_tokens: req.texts.reduce((s, t) => s + tokens(t), 0) },
    },
    response_type: 'embeddings_by_type',
  });
}

export const cohereApi: ProviderApi = {
  name: 'cohere',
  route(method, url) {
    if (method !== 'POST') return undefined;
    if (url.pathname === '/v2/chat') return { body: 'json', schema: chatRequest, handle: handleChat };
    if (url.pathname === '/v2/embed') return { body: 'json', schema: embedRequest, handle: handleEmbed };
    return undefined;
  },
  precheck(req, _url, apiKey) {
    const token = req.headers.authorization?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim();
    if (!token) return cohereError(401, 'no api key supplied');
    if (apiKey !== undefined && token !== apiKey) return cohereError(401, 'invalid api token');
    return undefined;
  },
  error: (status, message) => cohereError(status, message ?? MESSAGES[status] ?? `HTTP ${status}`),
  invalidJson: (detail) => cohereError(400, `invalid request: ${detail}`),
  invalidRequest: (issues) => {
    const first = issues[0]!;
    return cohereError(400, `invalid request: ${dottedPath(first.path)}: ${first.message}`);
  },
  notFound: () => cohereError(404, 'Not Found'),
  headers: () => ({ 'x-request-id': randomUUID() }),
};
