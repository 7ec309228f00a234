/**
 * Conversation keys in Redis, under the project's hash tag (the same `{p:<id>}` as every runtime-state
 * key): a conversation id looked up under another project's tag does not exist there.
 */
const tag = (projectId: string): string => `switchyard:{p:${projectId}}`;

export const CONVERSATION_KEYS = {
  /** String: the Conversation object's JSON (id, created_at, metadata). */
  conversation: (projectId: string, id: string): string => `${tag(projectId)}:conversation:${id}`,
  /** List: the conversation's items as JSON, oldest first. */
  items: (projectId: string, id: string): string => `${tag(projectId)}:conversation:${id}:items`,
  /** String: the token of the request holding the conversation's turn lock, expiring unless renewed. */
  lock: (projectId: string, id: string): string => `${tag(projectId)}:conversation:${id}:lock`,
} as const;
