/** OpenAI-style response bodies → canonical results. */
import { badResponse } from '../../upstream/errors.ts';
import { isObject, usageOf, usageWithCache } from '../common.ts';
import type {
  ChatResult,
  CompletionResult,
  EmbeddingResult,
  ImageResult,
  ToolCall,
  TranscriptionResult,
  Usage,
} from '../types.ts';

interface OpenAIUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  prompt_tokens_details?: { cached_tokens?: number } | null;
}

/** Cached prompt tokens are part of prompt_tokens (OpenAI caches prefixes by itself; it never reports writes). */
export function normaliseOpenAIUsage(u: unknown): Usage {
  if (!isObject(u)) return usageOf(0, 0);
  const x = u as OpenAIUsage;
  const details = x.prompt_tokens_details;
  if (!isObject(details)) return usageOf(x.prompt_tokens, x.completion_tokens, x.total_tokens);
  return usageWithCache(x.prompt_tokens, x.completion_tokens, x.total_tokens, {
    read: details.cached_tokens,
  });
}

interface ChatChoice {
  message?: { content?: string | null; tool_calls?: ToolCall[] | null; refusal?: string | null };
  text?: string;
  finish_reason?: string | null;
}
interface ChoicesBody {
  id?: string;
  model?: string;
  choices?: ChatChoice[];
  usage?: unknown;
}

function firstChoice(json: unknown): { body: ChoicesBody; choice: ChatChoice } {
  if (!isObject(json) || !Array.isArray(json.choices)) {
    throw badResponse('upstream response has no choices');
  }
  const body = json as ChoicesBody;
  const choice = body.choices?.[0];
  if (!isObject(choice)) throw badResponse('upstream response has no choices');
  return { body, choice };
}

export function parseOpenAIChat(json: unknown, model: string): ChatResult {
  const { body, choice } = firstChoice(json);
  const msg = choice.message ?? {};
  const result: ChatResult = {
    kind: 'chat',
    id: body.id ?? '',
    content: msg.content ?? (msg.refusal ? msg.refusal : null),
    finish_reason: choice.finish_reason ?? 'stop',
    usage: normaliseOpenAIUsage(body.usage),
    model: body.model ?? model,
  };
  if (Array.isArray(msg.tool_calls) && msg.tool_calls.length > 0) {
    result.tool_calls = msg.tool_calls.map((tc, i) => ({
      id: tc.id || `call_${i}`,
      type: 'function',
      function: { name: tc.function?.name ?? '', arguments: tc.function?.arguments ?? '' },
    }));
  }
  return result;
}

export function parseOpenAICompletion(json: unknown, model: string): CompletionResult {
  const { body, choice } = firstChoice(json);
  return {
    kind: 'completion',
    id: body.id ?? '',
    text: choice.text ?? '',
    finish_reason: choice.finish_reason ?? 'stop',
    usage: normaliseOpenAIUsage(body.usage),
    model: body.model ?? model,
  };
}

export function parseOpenAIEmbedding(json: unknown, model: string): EmbeddingResult {
  if (!isObject(json) || !Array.isArray(json.data))
    throw badResponse('upstream embedding response has no data');
  const data = json.data as { index?: number; embedding?: number[] | string }[];
  let ordered = true;
  for (let i = 0; i < data.length; i++) {
    const item = data[i];
    if (!item || item.embedding === undefined) {
      throw badResponse('upstream embedding response item has no embedding');
    }
    if (item.index !== undefined && item.index !== i) ordered = false;
  }
  const items = ordered ? data : data.slice().sort((a, b) => (a.index ?? 0) - (b.index ?? 0));
  const u = json.usage as OpenAIUsage | undefined;
  return {
    kind: 'embedding',
    embeddings: items.map((d) => d.embedding as number[] | string),
    // Embedding usage has no completion tokens; total may be absent on compatible servers.
    usage: usageOf(u?.prompt_tokens, 0, u?.total_tokens),
    model: typeof json.model === 'string' ? json.model : model,
  };
}

export function parseOpenAIImage(json: unknown): ImageResult {
  if (!isObject(json) || !Array.isArray(json.data)) throw badResponse('upstream image response has no data');
  const result: ImageResult = {
    kind: 'image',
    created: typeof json.created === 'number' ? json.created : Math.floor(Date.now() / 1000),
    images: (json.data as { url?: string; b64_json?: string; revised_prompt?: string }[]).map((d) => {
      const img: { url?: string; b64_json?: string; revised_prompt?: string } = {};
      if (d.url !== undefined) img.url = d.url;
      if (d.b64_json !== undefined) img.b64_json = d.b64_json;
      if (d.revised_prompt !== undefined) img.revised_prompt = d.revised_prompt;
      return img;
    }),
  };
  if (isObject(json.usage)) {
    const u = json.usage as { input_tokens?: number; output_tokens?: number; total_tokens?: number };
    result.usage = usageOf(u.input_tokens, u.output_tokens, u.total_tokens);
  }
  return result;
}

export function parseOpenAITranscription(json: unknown): TranscriptionResult {
  if (!isObject(json) || typeof json.text !== 'string') {
    throw badResponse('upstream transcription response has no text');
  }
  const result: TranscriptionResult = { kind: 'transcription', text: json.text };
  if (typeof json.duration === 'number') result.durationSeconds = json.duration;
  if (typeof json.language === 'string') result.language = json.language;
  if (isObject(json.usage) && json.usage.type === 'tokens') {
    const u = json.usage as { input_tokens?: number; output_tokens?: number; total_tokens?: number };
    result.usage = usageOf(u.input_tokens, u.output_tokens, u.total_tokens);
  } else if (
    isObject(json.usage) &&
    typeof json.usage.seconds === 'number' &&
    result.durationSeconds === undefined
  ) {
    result.durationSeconds = json.usage.seconds;
  }
  return result;
}

const AUDIO_MIME: Record<string, string> = {
  mp3: 'audio/mpeg',
  wav: 'audio/wav',
  opus: 'audio/opus',
  aac: 'audio/aac',
  flac: 'audio/flac',
  pcm: 'audio/pcm',
};

export function audioContentType(format: string, header: string | string[] | undefined): string {
  if (typeof header === 'string' && header.length > 0 && !header.startsWith('application/json'))
    return header;
  return AUDIO_MIME[format] ?? 'application/octet-stream';
}
