/** Gemini responses → canonical results. */
import { badResponse } from '../../upstream/errors.ts';
import { floatsToBase64, isObject, usageOf, usageWithCache } from '../common.ts';
import type { ChatResult, EmbeddingRequest, EmbeddingResult, ToolCall, Usage } from '../types.ts';

export interface GeminiUsage {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  totalTokenCount?: number;
  thoughtsTokenCount?: number;
  toolUsePromptTokenCount?: number;
  /** Of promptTokenCount, the tokens read from a context cache (implicit or explicit). */
  cachedContentTokenCount?: number;
}

export interface GeminiPart {
  text?: string;
  thought?: boolean;
  inlineData?: { mimeType?: string; data?: string };
  functionCall?: { id?: string; name?: string; args?: unknown };
}

export interface GeminiResponse {
  candidates?: { content?: { parts?: GeminiPart[] }; finishReason?: string }[];
  usageMetadata?: GeminiUsage;
  promptFeedback?: { blockReason?: string };
  modelVersion?: string;
  responseId?: string;
}

/** Completion tokens include thinking tokens (billed as output); total as reported. */
export function normaliseGeminiUsage(u: GeminiUsage | undefined): Usage {
  if (!u) return usageOf(0, 0);
  const prompt = (u.promptTokenCount ?? 0) + (u.toolUsePromptTokenCount ?? 0);
  const completion = (u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0);
  return usageWithCache(prompt, completion, u.totalTokenCount ?? prompt + completion, {
    read: u.cachedContentTokenCount,
  });
}

const FINISH: Record<string, string> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content_filter',
  RECITATION: 'content_filter',
  BLOCKLIST: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter',
  SPII: 'content_filter',
  IMAGE_SAFETY: 'content_filter',
  LANGUAGE: 'content_filter',
};

export function mapFinishReason(reason: string | undefined, hasToolCalls: boolean): string {
  if (reason === undefined || reason === 'STOP') return hasToolCalls ? 'tool_calls' : 'stop';
  return FINISH[reason] ?? reason.toLowerCase();
}

/** Gemini has no call ids (or only sometimes): derive a stable one from the response id and position. */
export function toolCallId(fc: { id?: string }, responseId: string | undefined, index: number): string {
  return fc.id || `call_${responseId ?? 'gemini'}_${index}`;
}

export function parseGeminiChat(json: unknown, model: string): ChatResult {
  if (!isObject(json)) throw badResponse('upstream response is not an object');
  const body = json as GeminiResponse;
  const candidate = body.candidates?.[0];
  if (!candidate) {
    if (body.promptFeedback?.blockReason) {
      return {
        kind: 'chat',
        id: body.responseId ?? '',
        content: null,
        finish_reason: 'content_filter',
        usage: normaliseGeminiUsage(body.usageMetadata),
        model: body.modelVersion ?? model,
      };
    }
    throw badResponse('upstream response has no candidates');
  }
  let text: string | null = null;
  let toolCalls: ToolCall[] | undefined;
  for (const part of candidate.content?.parts ?? []) {
    if (part.thought) continue;
    if (typeof part.text === 'string') {
      text = text === null ? part.text : text + part.text;
    } else if (part.functionCall) {
      toolCalls ??= [];
      toolCalls.push({
        id: toolCallId(part.functionCall, body.responseId, toolCalls.length),
        type: 'function',
        function: {
          name: part.functionCall.name ?? '',
          arguments: JSON.stringify(part.functionCall.args ?? {}),
        },
      });
    }
  }
  const result: ChatResult = {
    kind: 'chat',
    id: body.responseId ?? '',
    content: text,
    finish_reason: mapFinishReason(candidate.finishReason, toolCalls !== undefined),
    usage: normaliseGeminiUsage(body.usageMetadata),
    model: body.modelVersion ?? model,
  };
  if (toolCalls) result.tool_calls = toolCalls;
  return result;
}

export function parseGeminiEmbedding(json: unknown, req: EmbeddingRequest, model: string): EmbeddingResult {
  if (!isObject(json)) throw badResponse('upstream embedding response is not an object');
  let vectors: number[][];
  if (isObject(json.embedding) && Array.isArray(json.embedding.values)) {
    vectors = [json.embedding.values as number[]];
  } else if (Array.isArray(json.embeddings)) {
    vectors = (json.embeddings as { values?: number[] }[]).map((e) => {
      if (!e || !Array.isArray(e.values)) throw badResponse('upstream embedding has no values');
      return e.values;
    });
  } else {
    throw badResponse('upstream embedding response has no embedding');
  }
  const u = json.usageMetadata as GeminiUsage | undefined;
  return {
    kind: 'embedding',
    embeddings: req.encoding_format === 'base64' ? vectors.map(floatsToBase64) : vectors,
    // Gemini's embedding endpoints do not report token usage (only some versions send usageMetadata).
    usage: usageOf(u?.promptTokenCount ?? 0, 0, u?.totalTokenCount),
    model,
  };
}
