/** The OpenAI API surface under /v1, auth `Authorization: Bearer <key>`. */
import type { IncomingMessage } from 'node:http';
import type { ErrorReply, ProviderApi, Route } from '../exchange.ts';
import { newId } from '../generate.ts';
import { handleSpeech, handleTranscription } from './audio.ts';
import { handleChat } from './chat.ts';
import { handleCompletion } from './completions.ts';
import { handleEmbeddings } from './embeddings.ts';
import {
  openaiError,
  openaiInvalidJson,
  openaiInvalidRequest,
  openaiNotFound,
  openaiStatusError,
} from './errors.ts';
import { handleImages } from './images.ts';
import { handleGetModel, handleListModels } from './models.ts';
import {
  azureChatRequest,
  azureCompletionRequest,
  azureEmbeddingRequest,
  azureSpeechRequest,
  azureTranscriptionRequest,
  chatRequest,
  completionRequest,
  embeddingRequest,
  imageRequest,
  speechRequest,
  transcriptionRequest,
} from './schemas.ts';

/**
 * POST operations shared with Azure (keyed by the path after /v1/ or after /deployments/{name}/).
 * Azure's schemas differ only in `model` being optional, since the deployment names the model.
 */
export function operationRoute(operation: string, azure: boolean): Route | undefined {
  switch (operation) {
    case 'chat/completions':
      return { body: 'json', schema: azure ? azureChatRequest : chatRequest, handle: handleChat };
    case 'completions':
      return {
        body: 'json',
        schema: azure ? azureCompletionRequest : completionRequest,
        handle: handleCompletion,
      };
    case 'embeddings':
      return {
        body: 'json',
        schema: azure ? azureEmbeddingRequest : embeddingRequest,
        handle: handleEmbeddings,
      };
    case 'images/generations':
      return { body: 'json', schema: imageRequest, handle: handleImages };
    case 'audio/transcriptions':
      return {
        body: 'multipart',
        schema: azure ? azureTranscriptionRequest : transcriptionRequest,
        handle: handleTranscription,
      };
    case 'audio/speech':
      return { body: 'json', schema: azure ? azureSpeechRequest : speechRequest, handle: handleSpeech };
    default:
      return undefined;
  }
}

function maskKey(key: string): string {
  return key.length <= 8 ? '***' : `${key.slice(0, 3)}***${key.slice(-4)}`;
}

export function checkBearer(req: IncomingMessage, apiKey: string | undefined): ErrorReply | undefined {
  const header = req.headers.authorization;
  const key = header?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim();
  if (!key) {
    return openaiError(
      401,
      "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) if you're accessing the API from your browser and are prompted for a username and password. You can obtain an API key from https://platform.openai.com/account/api-keys.",
      'invalid_request_error',
    );
  }
  if (apiKey !== undefined && key !== apiKey) {
    return openaiError(
      401,
      `Incorrect API key provided: ${maskKey(key)}. You can find your API key at https://platform.openai.com/account/api-keys.`,
      'invalid_request_error',
      'invalid_api_key',
    );
  }
  return undefined;
}

export const openaiApi: ProviderApi = {
  name: 'openai',
  route(method, url) {
    const path = url.pathname;
    if (method === 'GET' && path === '/v1/models') return { body: 'none', handle: handleListModels };
    if (method === 'GET' && path.startsWith('/v1/models/')) return { body: 'none', handle: handleGetModel };
    if (method !== 'POST' || !path.startsWith('/v1/')) return undefined;
    return operationRoute(path.slice('/v1/'.length), false);
  },
  precheck: (req, _url, apiKey) => checkBearer(req, apiKey),
  error: (status, message) => openaiStatusError(status, message),
  invalidJson: () => openaiInvalidJson(),
  invalidRequest: (issues) => openaiInvalidRequest(issues),
  notFound: (method, pathname) => openaiNotFound(method, pathname),
  headers: () => ({
    'x-request-id': newId('req_'),
    'openai-version': '2020-10-01',
    'openai-processing-ms': '1',
  }),
};
