/**
 * Azure OpenAI: POST /openai/deployments/{deployment}/{operation}?api-version=...; auth header `api-key`
 * (or `Authorization: Bearer` for Entra ID tokens). The deployment name is the model. A missing
 * api-version is answered 404 "Resource not found", like the real service.
 */
import type { ProviderApi } from '../exchange.ts';
import { newId } from '../generate.ts';
import { openaiInvalidJson, openaiInvalidRequest } from '../openai/errors.ts';
import { operationRoute } from '../openai/routes.ts';
import { AZURE_AUTH_MESSAGE, azureError, azureStatusError } from './errors.ts';

const DEPLOYMENT_PATH = /^\/openai\/deployments\/([^/]+)\/(.+)$/;

export const azureApi: ProviderApi = {
  name: 'azure-openai',
  route(method, url) {
    if (method !== 'POST') return undefined;
    const m = DEPLOYMENT_PATH.exec(url.pathname);
    if (!m) return undefined;
    const route = operationRoute(m[2]!, true);
    return route && { ...route, model: decodeURIComponent(m[1]!) };
  },
  precheck(req, url, apiKey) {
    const header = req.headers['api-key'];
    const key =
      (typeof header === 'string' ? header.trim() : '') ||
      req.headers.authorization?.match(/^Bearer\s+(.+)$/i)?.[1]?.trim() ||
      '';
    if (!key || (apiKey !== undefined && key !== apiKey)) return azureError(401, '401', AZURE_AUTH_MESSAGE);
    if (!url.searchParams.get('api-version')) return azureError(404, '404', 'Resource not found');
    return undefined;
  },
  error: (status, message) => azureStatusError(status, message),
  invalidJson: () => openaiInvalidJson(),
  invalidRequest: (issues) => openaiInvalidRequest(issues),
  notFound: () => azureError(404, '404', 'Resource not found'),
  headers: () => ({ 'apim-request-id': newId(''), 'x-request-id': newId('') }),
};
