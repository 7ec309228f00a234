import type { CanonicalResult, ChatResult, CompletionResult, Usage } from '../providers/types.ts';

export const SYSTEM_FINGERPRINT = 'switchyard-compat-v1';

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: {
    index: number;
    message: {
      role: 'assistant';
      content: string | null;
      tool_calls?: ChatResult['tool_calls'];
      refusal: null;
    };
    finish_reason: string;
    logprobs: null;
  }[];
  usage: CompatUsage;
  system_fingerprint: string;
}

export interface CompatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens: number };
}

/**
 * `usage` in OpenAI's shape: the prompt-cache reads as `prompt_tokens_details.cached_tokens` when the
 * provider reported them (OpenAI's shape has no place for cache writes; they stay in prompt_tokens).
 */
export function compatUsage(u: Usage): CompatUsage {
  if (u.cache_read_tokens === undefined && u.cache_write_tokens === undefined) return u;
  const out: CompatUsage = {
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    total_tokens: u.total_tokens,
  };
  if (u.cache_read_tokens !== undefined) out.prompt_tokens_details = { cached_tokens: u.cache_read_tokens };
  return out;
}

const chatId = (id: string): string => (id.startsWith('chatcmpl-') ? id : `chatcmpl-${id}`);

/** OpenAI-style chat.completion for chat, vision and completion results; `model` is the workflow name. */
export function chatCompletion(
  result: ChatResult | CompletionResult,
  model: string,
  created: number,
): ChatCompletion {
  const content = result.kind === 'chat' ? result.content : result.text;
  const toolCalls = result.kind === 'chat' && result.tool_calls?.length ? result.tool_calls : undefined;
  return {
    id: chatId(result.id),
    object: 'chat.completion',
    created,
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content,
          ...(toolCalls ? { tool_calls: toolCalls } : {}),
          refusal: null,
        },
        finish_reason: result.finish_reason,
        logprobs: null,
      },
    ],
    usage: compatUsage(result.usage),
    system_fingerprint: SYSTEM_FINGERPRINT,
  };
}

/** `data` of a native response (the raw format returns the same object as the whole body). */
export function nativeData(
  result: CanonicalResult,
  name: string,
  created: number,
  structured: unknown,
): unknown {
  if (structured !== undefined) return structured;
  switch (result.kind) {
    case 'chat':
    case 'completion':
      return chatCompletion(result, name, created);
    case 'embedding':
      return {
        object: 'list',
        data: result.embeddings.map((embedding, index) => ({ object: 'embedding', embedding, index })),
        model: result.model,
        usage: { prompt_tokens: result.usage.prompt_tokens, total_tokens: result.usage.total_tokens },
      };
    case 'image':
      return {
        created: result.created,
        data: result.images.map((i) => ({
          ...(i.url ? { url: i.url } : {}),
          ...(i.b64_json ? { b64_json: i.b64_json } : {}),
          revised_prompt: i.revised_prompt ?? null,
        })),
      };
    case 'transcription':
      return { text: result.text };
    case 'speech':
      return { audio: Buffer.from(result.audio).toString('base64'), format: result.format };
  }
}
