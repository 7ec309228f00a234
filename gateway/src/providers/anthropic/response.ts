/** Anthropic Messages response → canonical chat/completion result. */
import { badResponse } from '../../upstream/errors.ts';
import { isObject, usageOf, usageWithCache } from '../common.ts';
import type { ChatResult, ToolCall, Usage } from '../types.ts';

export interface AnthropicUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  /** The cache writes by lifetime (part of cache_creation_input_tokens). */
  cache_creation?: { ephemeral_5m_input_tokens?: number; ephemeral_1h_input_tokens?: number } | null;
}

/** Prompt tokens include cache writes and reads (Anthropic reports them apart from input_tokens). */
export function normaliseAnthropicUsage(u: AnthropicUsage | undefined): Usage {
  if (!u) return usageOf(0, 0);
  const write = u.cache_creation_input_tokens;
  const read = u.cache_read_input_tokens;
  const prompt = (u.input_tokens ?? 0) + (write ?? 0) + (read ?? 0);
  return usageWithCache(prompt, u.output_tokens ?? 0, undefined, {
    read,
    write,
    write1h: u.cache_creation?.ephemeral_1h_input_tokens,
  });
}

const STOP_REASONS: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  pause_turn: 'stop',
  max_tokens: 'length',
  model_context_window_exceeded: 'length',
  tool_use: 'tool_calls',
  refusal: 'content_filter',
};

export function mapStopReason(reason: string | null | undefined): string {
  if (!reason) return 'stop';
  return STOP_REASONS[reason] ?? reason;
}

/** The sequence a stop on a stop sequence names (null when Anthropic did not say which). */
export function stopSequenceOf(
  reason: string | null | undefined,
  sequence: unknown,
): Pick<ChatResult, 'stop_sequence'> {
  if (reason !== 'stop_sequence') return {};
  return { stop_sequence: typeof sequence === 'string' ? sequence : null };
}

interface MessageBody {
  id?: string;
  model?: string;
  content?: { type: string; text?: string; id?: string; name?: string; input?: unknown }[];
  stop_reason?: string | null;
  stop_sequence?: string | null;
  usage?: AnthropicUsage;
}

/**
 * A message as the canonical result; `native`: the request was a native Messages request, so the
 * message also travels as Anthropic sent it (thinking blocks, cache usage) for the Messages encoder.
 */
export function parseAnthropicMessage(json: unknown, model: string, native = false): ChatResult {
  if (!isObject(json) || !Array.isArray(json.content)) throw badResponse('upstream message has no content');
  const body = json as MessageBody;
  let text: string | null = null;
  let toolCalls: ToolCall[] | undefined;
  for (const block of body.content ?? []) {
    if (block.type === 'text' && typeof block.text === 'string') {
      text = text === null ? block.text : text + block.text;
    } else if (block.type === 'tool_use') {
      toolCalls ??= [];
      toolCalls.push({
        id: block.id ?? `toolu_${toolCalls.length}`,
        type: 'function',
        function: { name: block.name ?? '', arguments: JSON.stringify(block.input ?? {}) },
      });
    }
  }
  const result: ChatResult = {
    kind: 'chat',
    id: body.id ?? '',
    content: text,
    finish_reason: mapStopReason(body.stop_reason),
    ...stopSequenceOf(body.stop_reason, body.stop_sequence),
    usage: normaliseAnthropicUsage(body.usage),
    model: body.model ?? model,
  };
  if (toolCalls) result.tool_calls = toolCalls;
  if (native) result.native = { dialect: 'anthropic-messages', body: json as Record<string, unknown> };
  return result;
}
