import { GatewayError } from '../errors/index.ts';
import type { ChatMessage } from '../providers/types.ts';
import { conversationHistory } from '../requests/conversation-items.ts';
import type { ConversationStore } from './types.ts';

export const DAY_MS = 86_400_000;

export const conversationNotFound = (id: string, param?: string): GatewayError =>
  new GatewayError('conversation_not_found', `Conversation with id "${id}" not found.`, { param });

export const conversationsUnavailable = (err: unknown): GatewayError =>
  new GatewayError('service_unavailable', 'Conversations are unavailable right now.', {
    retryAfterSeconds: 1,
    cause: err,
  });

/** Store calls fail as a retryable 503, never as a 5xx the client cannot act on. */
export const guarded = <T>(p: Promise<T>): Promise<T> =>
  p.catch((err: unknown) => {
    throw conversationsUnavailable(err);
  });

/** The `conversation` parameter of POST /v1/responses: an id, or an object with the id. */
export const conversationIdOf = (ref: string | { id: string }): string =>
  typeof ref === 'string' ? ref : ref.id;

/**
 * The conversation a Responses request continues: its id and the chat history its items make (the
 * input's prefix). Another project's conversation is not found.
 */
export async function continuedConversation(
  store: ConversationStore,
  projectId: string,
  ref: string | { id: string },
): Promise<{ id: string; history: ChatMessage[] }> {
  const id = conversationIdOf(ref);
  const items = await guarded(store.items(projectId, id));
  if (!items) throw conversationNotFound(id, 'conversation');
  return { id, history: conversationHistory(items) };
}

/** `conversation` and `previous_response_id` name the prefix two ways: OpenAI refuses both at once. */
export function oneContinuation(body: { conversation?: unknown; previous_response_id?: unknown }): void {
  if (body.conversation != null && body.previous_response_id != null)
    throw new GatewayError(
      'invalid_request',
      "Mutually exclusive parameters: Ensure you are only providing one of: 'previous_response_id' or 'conversation'.",
      { param: 'conversation' },
    );
}
