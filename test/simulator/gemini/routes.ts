/**
 * Gemini: POST /v1beta/models/{model}:{method} (also /v1/ and /v1alpha/), the key in the
 * `x-goog-api-key` header or the `key` query parameter (an OAuth `Authorization: Bearer` also passes).
 * The model comes from the path.
 */
import type { Exchange, ProviderApi, Route } from '../exchange.ts';
import { sendJson } from '../respond.ts';
import { handleBatchEmbed, handleCountTokens, handleEmbed } from './embed.ts';
import {
  geminiError,
  geminiInvalidKey,
  geminiInvalidRequest,
  geminiMissingKey,
  geminiStatusError,
} from './errors.ts';
import { handleGenerate, handleStreamGenerate } from './generate.ts';
import { handlePredict, predictRequest } from './predict.ts';
import {
  batchEmbedContentsRequest,
  countTokensRequest,
  embedContentRequest,
  generateContentRequest,
} from './schemas.ts';

const METHOD_PATH = /^\/(?:v1beta|v1|v1alpha)\/models\/([^/:]+):([A-Za-z]+)$/;
const LIST_PATH = /^\/(?:v1beta|v1|v1alpha)\/models$/;

const REQUEST_TYPES: Record<string, string> = {
  generateContent: 'GenerateContentRequest',
  streamGenerateContent: 'GenerateContentRequest',
  embedContent: 'EmbedContentRequest',
  batchEmbedContents: 'BatchEmbedContentsRequest',
  countTokens: 'CountTokensRequest',
  predict: 'PredictRequest',
};

const METHODS: Record<string, Omit<Route, 'model'>> = {
  generateContent: { body: 'json', schema: generateContentRequest, handle: handleGenerate },
  streamGenerateContent: { body: 'json', schema: generateContentRequest, handle: handleStreamGenerate },
  embedContent: { body: 'json', schema: embedContentRequest, handle: handleEmbed },
  batchEmbedContents: { body: 'json', schema: batchEmbedContentsRequest, handle: handleBatchEmbed },
  countTokens: { body: 'json', schema: countTokensRequest, handle: handleCountTokens },
  predict: { body: 'json', schema: predictRequest, handle: handlePredict },
};

const MODELS = [
  'gemini-2.5-pro',
  'gemini-2.5-flash',
  'gemini-2.0-flash',
  'text-embedding-004',
  'gemini-embedding-001',
];

async function handleList(ex: Exchange): Promise<void> {
  return sendJson(ex, 200, {
    models: MODELS.map((m) => ({
      name: `models/${m}`,
      version: '001',
      displayName: m,
      inputTokenLimit: 1_048_576,
      outputTokenLimit: 65_536,
      supportedGenerationMethods: m.includes('embedding')
        ? ['embedContent', 'batchEmbedContents']
        : ['generateContent', 'streamGenerateContent', 'countTokens'],
    })),
  });
}

export const geminiApi: ProviderApi = {
  name: 'gemini',
  route(method, url) {
    if (method === 'GET' && LIST_PATH.test(url.pathname)) return { body: 'none', handle: handleList };
    const m = METHOD_PATH.exec(url.pathname);
    if (method !== 'POST' || !m) return undefined;
    const route = METHODS[m[2]!];
    return route && { ...route, model: decodeURIComponent(m[1]!) };
  },
  precheck(req, url, apiKey) {
    const header = req.headers['x-goog-api-key'];
    const key =
      (typeof header === 'string' ? header.trim() : '') ||
      url.searchParams.get('key')?.trim() ||
      req.headers.authorization?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim() ||
      '';
    if (!key) return geminiMissingKey();
    if (apiKey !== undefined && key !== apiKey) return geminiInvalidKey();
    return undefined;
  },
  error: (status, message) => geminiStatusError(status, message),
  invalidJson: (detail) => geminiError(400, `Invalid JSON payload received. ${detail}`, 'INVALID_ARGUMENT'),
  invalidRequest: (issues, url) =>
    geminiInvalidRequest(
      issues,
      REQUEST_TYPES[METHOD_PATH.exec(url.pathname)?.[2] ?? ''] ?? 'GenerateContentRequest',
    ),
  notFound: (method, pathname) =>
    geminiError(404, `Requested entity was not found. (${method} ${pathname})`, 'NOT_FOUND'),
  headers: () => ({}),
};
