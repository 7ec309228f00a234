/**
 * Vertex AI: POST /v1/projects/{project}/locations/{location}/publishers/{publisher}/models/{model}:{method}.
 *   google:    generateContent, streamGenerateContent[?alt=sse] (the Gemini API's bodies; Vertex also
 *              requires every content's role), predict (Imagen, embeddings), countTokens;
 *   anthropic: rawPredict, streamRawPredict (the Messages API body without `model`, with
 *              `anthropic_version: vertex-2023-10-16`).
 * The bearer must be an access token the fake token endpoint or metadata server issued, unexpired.
 */
import { z } from 'zod';
import { handleMessages } from '../anthropic/messages.ts';
import { messagesRequest } from '../anthropic/schemas.ts';
import type { Exchange, ProviderApi, Route } from '../exchange.ts';
import { handleCountTokens } from '../gemini/embed.ts';
import { geminiError, geminiInvalidRequest, geminiStatusError } from '../gemini/errors.ts';
import { handleGenerate, handleStreamGenerate } from '../gemini/generate.ts';
import { handlePredict, predictRequest } from '../gemini/predict.ts';
import { content, countTokensRequest, generateContentRequest } from '../gemini/schemas.ts';

const PATH =
  /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/(google|anthropic)\/models\/([^/:]+):([A-Za-z]+)$/;

const vertexContent = content.extend({
  role: z.enum(['user', 'model'], { message: 'Please use a valid role: user, model.' }),
});
const vertexGenerate = generateContentRequest.extend({ contents: z.array(vertexContent).min(1) });
const vertexMessages = messagesRequest
  .omit({ model: true })
  .extend({ anthropic_version: z.literal('vertex-2023-10-16') });

/** The Messages API's handler reads `model` from the body; Vertex has it in the path. */
const claude = (ex: Exchange) => handleMessages(ex);

const GOOGLE: Record<string, Omit<Route, 'model'>> = {
  generateContent: { body: 'json', schema: vertexGenerate, handle: handleGenerate },
  streamGenerateContent: { body: 'json', schema: vertexGenerate, handle: handleStreamGenerate },
  predict: { body: 'json', schema: predictRequest, handle: handlePredict },
  countTokens: { body: 'json', schema: countTokensRequest, handle: handleCountTokens },
};
const ANTHROPIC: Record<string, Omit<Route, 'model'>> = {
  rawPredict: { body: 'json', schema: vertexMessages, handle: claude },
  streamRawPredict: { body: 'json', schema: vertexMessages, handle: claude },
};

export const vertexApi: ProviderApi = {
  name: 'vertex-ai',
  route(method, url) {
    const m = PATH.exec(url.pathname);
    if (method !== 'POST' || !m) return undefined;
    const route = (m[3] === 'anthropic' ? ANTHROPIC : GOOGLE)[m[5]!];
    return route && { ...route, model: decodeURIComponent(m[4]!) };
  },
  precheck(req, _url, _apiKey, ctx) {
    const token = req.headers.authorization?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim();
    const verdict = token ? ctx.auth.checkBearer(token) : 'unknown';
    if (verdict === 'ok') return undefined;
    return geminiError(
      401,
      verdict === 'expired'
        ? 'Request had invalid authentication credentials. The access token expired.'
        : 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
      'UNAUTHENTICATED',
    );
  },
  error: (status, message) => geminiStatusError(status, message),
  invalidJson: (detail) => geminiError(400, `Invalid JSON payload received. ${detail}`, 'INVALID_ARGUMENT'),
  invalidRequest: (issues) => geminiInvalidRequest(issues, 'GenerateContentRequest'),
  notFound: (method, pathname) =>
    geminiError(
      404,
      `Publisher model was not found or your project does not have access to it. (${method} ${pathname})`,
      'NOT_FOUND',
    ),
  headers: () => ({}),
};
