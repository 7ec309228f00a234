import { z } from 'zod';

/** The Conversation object as the API returns it. */
export const conversationObject = z.object({
  id: z.string(),
  object: z.literal('conversation'),
  created_at: z.number(),
  metadata: z.record(z.string(), z.string()),
});
export type ConversationObject = z.infer<typeof conversationObject>;

/** A conversation item as stored and listed: an input or output item of the Responses API, with its id. */
export type ConversationItem = Record<string, unknown> & { id: string; type: string };

/** What deleting an item finds. */
export type ItemDeleted = 'deleted' | 'no_item' | 'no_conversation';

/**
 * Conversations of every project (the Conversations API). A conversation id looked up under another
 * project does not exist. Every write keeps the conversation for `ttlMs` more (the project's
 * stored-responses retention), and resolves once it is durable: an answer is sent after it.
 */
export interface ConversationStore {
  create(
    projectId: string,
    conv: ConversationObject,
    items: ConversationItem[],
    ttlMs: number,
  ): Promise<void>;
  get(projectId: string, id: string): Promise<ConversationObject | undefined>;
  /** Its items, oldest first; undefined when there is no such conversation. */
  items(projectId: string, id: string): Promise<ConversationItem[] | undefined>;
  /** Replaces its metadata; false when there is no such conversation. */
  update(projectId: string, conv: ConversationObject, ttlMs: number): Promise<boolean>;
  /** Appends items at its end; false when there is no such conversation. */
  append(projectId: string, id: string, items: ConversationItem[], ttlMs: number): Promise<boolean>;
  deleteItem(projectId: string, id: string, itemId: string): Promise<ItemDeleted>;
  /** True when something was deleted. */
  delete(projectId: string, id: string): Promise<boolean>;
  /**
   * The turn lock (conversations/lock.ts): taken when free (true), kept with `renewLock` while its
   * holder lives, given back with `unlock`; each only for the holder's `token`, so an expired holder
   * never renews or frees a lock another request took since.
   */
  tryLock(projectId: string, id: string, token: string, ttlMs: number): Promise<boolean>;
  renewLock(projectId: string, id: string, token: string, ttlMs: number): Promise<boolean>;
  unlock(projectId: string, id: string, token: string): Promise<void>;
}
