/** Anthropic Messages response → canonical chat/completion result. */
import { badResponse } from '../../upstream/errors.ts';
import { isObject, usageOf } from '../common.ts';
import type { ChatResult, ToolCall, Usage } from '../types.ts';

export interface AnthropicUsage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

/** Prompt tokens include cache writes and reads (Anthropic reports them separately). */
export function normaliseAnthropicUsage(u: AnthropicUsage | undefined): Usage {
  if (!u) return usageOf(0, 0);
  const prompt =
    (u.input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0);
  return usageOf(prompt, u.output_tokens ?? 0);
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

interface MessageBody {
  id?: string;
  model?: string;
  content?: { type: string; text?: string; id?: string; name?: string; input?: unknown }[];
  stop_reason?: string | null;
  usage?: AnthropicUsage;
}

export function parseAnthropicMessage(json: unknown, model: string): ChatResult {
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
    usage: normaliseAnthropicUsage(body.usage),
    model: body.model ?? model,
  };
  if (toolCalls) result.tool_calls = toolCalls;
  return result;
}
