/** Azure OpenAI: deployment-addressed URLs and `api-key` auth; bodies come from the openai folder. */
import { BoundedMap } from '../../domain/bounded-map.ts';
import { trimSlash } from '../common.ts';
import { isReasoningModel, OPENAI_OPERATIONS, type OpenAIDialect } from '../openai/request.ts';
import type { RequestKind, UpstreamTarget } from '../types.ts';

export const DEFAULT_AZURE_API_VERSION = '2024-10-21';

export const AZURE_DIALECT: OpenAIDialect = {
  modelInBody: false, // the deployment is in the URL
  streamUsage: true,
  jsonSchema: true,
  developerRole: true,
  maxCompletionTokens: isReasoningModel,
  // No `params`: every optional parameter goes as OpenAI spells it. Which ones a deployment takes
  // depends on its api-version, and Azure's own 400 names any it does not.
  server: 'azure-openai',
};

const cache = new BoundedMap<string, string>(10_000);

/** `{baseURL}/openai/deployments/{model}/{op}?api-version=…` (target.model is the deployment name). */
export function azureUrl(target: UpstreamTarget, kind: RequestKind): string {
  const version = target.options?.apiVersion ?? DEFAULT_AZURE_API_VERSION;
  const key = `${kind} ${version} ${target.model} ${target.baseURL}`;
  let url = cache.get(key);
  if (url === undefined) {
    url = `${trimSlash(target.baseURL)}/openai/deployments/${encodeURIComponent(target.model)}/${
      OPENAI_OPERATIONS[kind]
    }?api-version=${encodeURIComponent(version)}`;
    cache.set(key, url);
  }
  return url;
}

export function azureHeaders(target: UpstreamTarget, json: boolean): Record<string, string> {
  const h: Record<string, string> = { 'api-key': target.apiKey };
  if (json) h['content-type'] = 'application/json';
  return h;
}
