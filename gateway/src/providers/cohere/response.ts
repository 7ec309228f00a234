/** Cohere v2 answers → canonical results. */
import { badResponse } from '../../upstream/errors.ts';
import { floatsToBase64, isObject, usageOf } from '../common.ts';
import type { ChatResult, EmbeddingRequest, EmbeddingResult, ToolCall, Usage } from '../types.ts';

export interface CohereUsage {
  billed_units?: { input_tokens?: number; output_tokens?: number };
  tokens?: { input_tokens?: number; output_tokens?: number };
}

/** Billed units are what costs money (the `tokens` count includes Cohere's own prompt template). */
export function normaliseCohereUsage(u: CohereUsage | undefined): Usage {
  const b = u?.billed_units ?? u?.tokens;
  return usageOf(b?.input_tokens ?? 0, b?.output_tokens ?? 0);
}

const FINISH: Record<string, string> = {
  COMPLETE: 'stop',
  STOP_SEQUENCE: 'stop',
  MAX_TOKENS: 'length',
  TOOL_CALL: 'tool_calls',
};

export const mapFinishReason = (reason: string | undefined): string =>
  reason === undefined ? 'stop' : (FINISH[reason] ?? reason.toLowerCase());

/** Cohere says that a stop sequence fired, not which one. */
export const cohereStopSequence = (reason: unknown): Pick<ChatResult, 'stop_sequence'> =>
  reason === 'STOP_SEQUENCE' ? { stop_sequence: null } : {};

interface CohereMessage {
  content?: { type?: string; text?: string }[];
  tool_calls?: { id?: string; function?: { name?: string; arguments?: string } }[];
}

export function parseCohereChat(json: unknown, model: string): ChatResult {
  if (!isObject(json) || !isObject(json.message)) throw badResponse('upstream chat answer has no message');
  const msg = json.message as CohereMessage;
  let text: string | null = null;
  for (const c of msg.content ?? [])
    if (c.type === 'text' && typeof c.text === 'string') text = (text ?? '') + c.text;
  const toolCalls: ToolCall[] | undefined = msg.tool_calls?.length
    ? msg.tool_calls.map((tc, i) => ({
        id: tc.id ?? `call_${i}`,
        type: 'function',
        function: { name: tc.function?.name ?? '', arguments: tc.function?.arguments ?? '{}' },
      }))
    : undefined;
  const result: ChatResult = {
    kind: 'chat',
    id: typeof json.id === 'string' ? json.id : '',
    content: text,
    finish_reason: mapFinishReason(typeof json.finish_reason === 'string' ? json.finish_reason : undefined),
    ...cohereStopSequence(json.finish_reason),
    usage: normaliseCohereUsage(json.usage as CohereUsage | undefined),
    model,
  };
  if (toolCalls) result.tool_calls = toolCalls;
  return result;
}

export function parseCohereEmbedding(json: unknown, req: EmbeddingRequest, model: string): EmbeddingResult {
  if (!isObject(json)) throw badResponse('upstream embedding answer is not an object');
  const e = json.embeddings;
  const vectors = isObject(e) && Array.isArray(e.float) ? e.float : Array.isArray(e) ? e : undefined;
  if (!vectors) throw badResponse('upstream embedding answer has no float embeddings');
  const meta = isObject(json.meta) ? (json.meta as { billed_units?: { input_tokens?: number } }) : {};
  return {
    kind: 'embedding',
    embeddings:
      req.encoding_format === 'base64'
        ? (vectors as number[][]).map(floatsToBase64)
        : (vectors as number[][]),
    usage: usageOf(meta.billed_units?.input_tokens ?? 0, 0),
    model,
  };
}
