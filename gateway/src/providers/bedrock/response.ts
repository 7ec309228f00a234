/** Bedrock answers → canonical results: Converse messages, InvokeModel embeddings and images. */
import type { IncomingHttpHeaders } from 'node:http';
import { badResponse } from '../../upstream/errors.ts';
import { floatsToBase64, isObject, usageOf, usageWithCache } from '../common.ts';
import type {
  ChatResult,
  EmbeddingRequest,
  EmbeddingResult,
  ImageRequest,
  ImageResult,
  ToolCall,
  Usage,
} from '../types.ts';
import type { EmbeddingFamily } from './request.ts';

export interface ConverseUsage {
  inputTokens?: number;
  outputTokens?: number;
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
  /** The cache writes by lifetime (`5m`, `1h`), part of cacheWriteInputTokens. */
  cacheDetails?: unknown;
}

/** The cache writes of a one-hour checkpoint: the `1h` entries of cacheDetails. */
function hourWrites(details: unknown): number | undefined {
  if (!Array.isArray(details)) return undefined;
  let sum = 0;
  for (const d of details)
    if (isObject(d) && d.ttl === '1h' && typeof d.inputTokens === 'number') sum += d.inputTokens;
  return sum;
}

/** Prompt tokens include prompt-cache reads and writes (reported apart). */
export function normaliseConverseUsage(u: ConverseUsage | undefined): Usage {
  if (!u) return usageOf(0, 0);
  const prompt = (u.inputTokens ?? 0) + (u.cacheReadInputTokens ?? 0) + (u.cacheWriteInputTokens ?? 0);
  return usageWithCache(prompt, u.outputTokens ?? 0, undefined, {
    read: u.cacheReadInputTokens,
    write: u.cacheWriteInputTokens,
    write1h: hourWrites(u.cacheDetails),
  });
}

const STOP_REASONS: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  guardrail_intervened: 'content_filter',
  content_filtered: 'content_filter',
};

export const mapStopReason = (reason: string | undefined): string =>
  reason === undefined ? 'stop' : (STOP_REASONS[reason] ?? reason);

/**
 * A stop on a stop sequence: Converse names the sequence only in Anthropic models'
 * `additionalModelResponseFields`, else null (one fired, which is not said).
 */
export function converseStopSequence(
  reason: unknown,
  additional: unknown,
): Pick<ChatResult, 'stop_sequence'> {
  if (reason !== 'stop_sequence') return {};
  const named = isObject(additional) ? additional.stop_sequence : undefined;
  return { stop_sequence: typeof named === 'string' ? named : null };
}

interface ConverseBlock {
  text?: string;
  toolUse?: { toolUseId?: string; name?: string; input?: unknown };
}

const requestId = (headers: IncomingHttpHeaders): string => {
  const id = headers['x-amzn-requestid'];
  return typeof id === 'string' ? id : '';
};

export function parseConverse(json: unknown, model: string, headers: IncomingHttpHeaders): ChatResult {
  if (!isObject(json) || !isObject(json.output) || !isObject(json.output.message))
    throw badResponse('upstream Converse answer has no output.message');
  const content = json.output.message.content;
  if (!Array.isArray(content)) throw badResponse('upstream Converse message has no content');
  let text: string | null = null;
  let toolCalls: ToolCall[] | undefined;
  for (const block of content as ConverseBlock[]) {
    if (typeof block.text === 'string') text = text === null ? block.text : text + block.text;
    else if (block.toolUse) {
      toolCalls ??= [];
      toolCalls.push({
        id: block.toolUse.toolUseId ?? `tooluse_${toolCalls.length}`,
        type: 'function',
        function: { name: block.toolUse.name ?? '', arguments: JSON.stringify(block.toolUse.input ?? {}) },
      });
    }
  }
  const result: ChatResult = {
    kind: 'chat',
    id: requestId(headers),
    content: text,
    finish_reason: mapStopReason(typeof json.stopReason === 'string' ? json.stopReason : undefined),
    ...converseStopSequence(json.stopReason, json.additionalModelResponseFields),
    usage: normaliseConverseUsage(json.usage as ConverseUsage | undefined),
    model,
  };
  if (toolCalls) result.tool_calls = toolCalls;
  return result;
}

const headerCount = (headers: IncomingHttpHeaders, name: string): number | undefined => {
  const v = headers[name];
  const n = typeof v === 'string' ? Number(v) : Number.NaN;
  return Number.isFinite(n) ? n : undefined;
};

/** One InvokeModel embedding answer: its vectors and input tokens (body, else Bedrock's count header). */
export function parseEmbeddingAnswer(
  json: unknown,
  family: EmbeddingFamily,
  headers: IncomingHttpHeaders,
): { vectors: number[][]; tokens: number } {
  if (!isObject(json)) throw badResponse('upstream embedding answer is not an object');
  const fromHeader = headerCount(headers, 'x-amzn-bedrock-input-token-count') ?? 0;
  if (family === 'titan') {
    if (!Array.isArray(json.embedding)) throw badResponse('upstream Titan answer has no embedding');
    const count = typeof json.inputTextTokenCount === 'number' ? json.inputTextTokenCount : fromHeader;
    return { vectors: [json.embedding as number[]], tokens: count };
  }
  // Cohere: `embeddings` is the float list, or by type when embedding_types was sent.
  const e = json.embeddings;
  const vectors = Array.isArray(e) ? e : isObject(e) && Array.isArray(e.float) ? e.float : undefined;
  if (!vectors) throw badResponse('upstream Cohere answer has no float embeddings');
  return { vectors: vectors as number[][], tokens: fromHeader };
}

export function embeddingResult(
  answers: { vectors: number[][]; tokens: number }[],
  req: EmbeddingRequest,
  model: string,
): EmbeddingResult {
  const vectors = answers.flatMap((a) => a.vectors);
  const tokens = answers.reduce((sum, a) => sum + a.tokens, 0);
  return {
    kind: 'embedding',
    embeddings: req.encoding_format === 'base64' ? vectors.map(floatsToBase64) : vectors,
    usage: usageOf(tokens, 0),
    model,
  };
}

/** Titan / Nova Canvas `{images: [base64 PNG]}`; URLs are data: URLs (Bedrock stores nothing). */
export function parseImages(json: unknown, req: ImageRequest): ImageResult {
  if (!isObject(json)) throw badResponse('upstream image answer is not an object');
  if (typeof json.error === 'string' && json.error) throw badResponse(`upstream image error: ${json.error}`);
  if (!Array.isArray(json.images) || json.images.some((i) => typeof i !== 'string'))
    throw badResponse('upstream image answer has no images');
  return {
    kind: 'image',
    created: Math.floor(Date.now() / 1000),
    images: (json.images as string[]).map((b64) =>
      req.response_format === 'b64_json' ? { b64_json: b64 } : { url: `data:image/png;base64,${b64}` },
    ),
  };
}
