export { MemoryStoredResponseStore } from './memory-store.ts';
export { RedisStoredResponseStore } from './redis-store.ts';
export type { StoredResponse, StoredResponseStore } from './types.ts';
