/**
 * Bedrock Runtime: POST /model/{modelId}/converse, /converse-stream, /invoke. Every request must be
 * SigV4-signed (service `bedrock`) with a key the simulator knows: the pair it was given, or
 * temporary keys its fake STS issued (see sigv4.ts). The model id is the path segment, decoded.
 */
import type { ProviderApi } from '../exchange.ts';
import { handleConverse, handleConverseStream } from './converse.ts';
import { bedrockError, bedrockHeaders, bedrockInvalidRequest, bedrockStatusError } from './errors.ts';
import { handleInvoke } from './invoke.ts';
import { converseRequest } from './schemas.ts';
import { verifySigV4 } from './sigv4.ts';

const PATH = /^\/model\/([^/]+)\/(converse|converse-stream|invoke)$/;

export const bedrockApi: ProviderApi = {
  name: 'bedrock',
  route(method, url) {
    const m = PATH.exec(url.pathname);
    if (method !== 'POST' || !m) return undefined;
    const model = decodeURIComponent(m[1]!);
    if (m[2] === 'invoke') return { model, body: 'json', handle: handleInvoke };
    return {
      model,
      body: 'json',
      schema: converseRequest,
      handle: m[2] === 'converse' ? handleConverse : handleConverseStream,
    };
  },
  precheck(req, _url, _apiKey, ctx) {
    const result = verifySigV4(req, ctx.raw, ctx.auth, 'bedrock');
    return result.ok ? undefined : bedrockError(result.status, result.type, result.message);
  },
  error: (status, message) => bedrockStatusError(status, message),
  invalidJson: () =>
    bedrockError(
      400,
      'ValidationException',
      'Malformed input request, please reformat your input and try again.',
    ),
  invalidRequest: (issues) => bedrockInvalidRequest(issues),
  notFound: (method, pathname) =>
    bedrockError(404, 'UnknownOperationException', `Unknown operation ${method} ${pathname}`),
  headers: bedrockHeaders,
};
