export { MemoryConversationStore } from './memory-store.ts';
export { RedisConversationStore } from './redis-store.ts';
export type { ConversationItem, ConversationObject, ConversationStore } from './types.ts';
