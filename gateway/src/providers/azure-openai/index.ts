import { ALL_KINDS, createOpenAIStyleAdapter } from '../openai/index.ts';
import type { ProviderAdapter } from '../types.ts';
import { AZURE_DIALECT, azureHeaders, azureUrl } from './request.ts';

/**
 * Azure OpenAI. Request bodies, response parsing, streaming and error mapping are the openai
 * folder's modules; this folder only supplies the URL scheme, the `api-key` header and the dialect.
 */
export const azureOpenAIAdapter: ProviderAdapter = createOpenAIStyleAdapter({
  type: 'azure-openai',
  kinds: ALL_KINDS,
  supportsNativeStructuredOutput: true,
  url: azureUrl,
  headers: azureHeaders,
  dialect: () => AZURE_DIALECT,
});
