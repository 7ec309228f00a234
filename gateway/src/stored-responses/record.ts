import type { ChatMessage, ToolCall } from '../providers/types.ts';
import { callOfItem, ToolNames } from '../requests/responses-tools.ts';
import type { StoredResponse } from './types.ts';

/**
 * The assistant turn of a response's output items, for the conversation the next turn continues;
 * calls to namespaced and custom tools under the provider-facing names `names` gave them.
 */
export function assistantTurn(output: unknown, names: ToolNames = new ToolNames()): ChatMessage {
  let text = '';
  const calls: ToolCall[] = [];
  for (const item of Array.isArray(output) ? (output as Record<string, unknown>[]) : []) {
    if (item.type === 'message' && Array.isArray(item.content))
      for (const part of item.content as { type?: string; text?: string }[])
        if (part.type === 'output_text') text += part.text ?? '';
    const call = callOfItem(item, names);
    if (call) calls.push(call);
  }
  return { role: 'assistant', content: text || null, ...(calls.length ? { tool_calls: calls } : {}) };
}

/** The conversation a stored record continues with. */
export const conversationOf = (r: StoredResponse): ChatMessage[] =>
  r.conversation as unknown as ChatMessage[];
