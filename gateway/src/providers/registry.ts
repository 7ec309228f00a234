import { anthropicAdapter } from './anthropic/index.ts';
import { azureOpenAIAdapter } from './azure-openai/index.ts';
import { bedrockAdapter } from './bedrock/index.ts';
import { cohereAdapter } from './cohere/index.ts';
import { geminiAdapter } from './gemini/index.ts';
import { openaiAdapter } from './openai/index.ts';
import { openAICompatibleAdapter } from './openai-compatible/index.ts';
import type { ProviderAdapter, ProviderType } from './types.ts';
import { vertexAdapter } from './vertex-ai/index.ts';

const ADAPTERS: Record<ProviderType, ProviderAdapter> = {
  openai: openaiAdapter,
  'azure-openai': azureOpenAIAdapter,
  anthropic: anthropicAdapter,
  gemini: geminiAdapter,
  'openai-compatible': openAICompatibleAdapter,
  bedrock: bedrockAdapter,
  'vertex-ai': vertexAdapter,
  cohere: cohereAdapter,
};

export function getAdapter(type: ProviderType): ProviderAdapter {
  const adapter = ADAPTERS[type];
  if (adapter === undefined) throw new Error(`unknown provider type: ${String(type)}`);
  return adapter;
}
