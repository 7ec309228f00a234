import { GatewayError } from '../errors/index.ts';
import type { ChatMessage } from '../providers/types.ts';
import { INPUT_ITEMS } from './responses-schema.ts';
import { ToolNames } from './responses-tools.ts';
import { parseItems, type StoredItem, storedItems, toMessages } from './responses-translate.ts';

/**
 * Items of a conversation (Conversations API): validated as the input items of POST /v1/responses
 * are, each with an id; errors name them under `param` (`items`).
 */
export function conversationItems(raw: unknown[], param: string): StoredItem[] {
  try {
    return storedItems(parseItems(raw));
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    throw new GatewayError(err.code, err.message.replace(/\binput\b/, param), {
      param: err.param?.replace(/^input/, param),
    });
  }
}

/**
 * The chat history a conversation's items make, the prefix of a turn that continues it. Items of a
 * type a request cannot send carry nothing into the prompt. A namespaced call takes its
 * deterministic flat name (responses-tools.ts `flatName`), as the turn's own tools give it unless
 * two of them collide.
 */
export function conversationHistory(items: readonly Record<string, unknown>[]): ChatMessage[] {
  const known: readonly string[] = Object.keys(INPUT_ITEMS);
  const usable = items.filter((i) => known.includes(String(i.type)));
  return usable.length === 0 ? [] : toMessages(parseItems(usable), [], new ToolNames());
}
