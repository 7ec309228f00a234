import { ALL_KINDS, bearerHeaders, createOpenAIStyleAdapter, joinOperation } from '../openai/index.ts';
import type { ProviderAdapter } from '../types.ts';
import { compatDialect, refuseKind } from './request.ts';

/**
 * OpenAI-compatible servers (Groq, Mistral, Together, DeepSeek, xAI, Ollama, vLLM, …), addressed by
 * base URL (which includes `/v1`). Everything is the openai folder's code; the per-server
 * differences (stream_options, json_schema, developer role, kinds served) come from the dialect
 * detected from the base URL, overridable per target via `options.streamUsage` / `options.jsonSchema`.
 *
 * supportsNativeStructuredOutput is false: most of these servers are driven in `json_object` mode
 * with the schema given as an instruction, so the gateway must validate the result.
 */
export const openAICompatibleAdapter: ProviderAdapter = createOpenAIStyleAdapter({
  type: 'openai-compatible',
  kinds: ALL_KINDS,
  supportsNativeStructuredOutput: false,
  url: (t, kind) => joinOperation(t.baseURL, kind),
  headers: (t, json) => bearerHeaders(t.apiKey, json),
  dialect: compatDialect,
  refuse: refuseKind,
});
