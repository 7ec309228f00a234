export { type SessionFeatureDeps, type SessionMemory, sessionMemory } from './feature.ts';
export { MemorySessionStore } from './memory-store.ts';
export { RedisSessionStore } from './redis-store.ts';
export type { SummaryCaller } from './summarize.ts';
export type { SessionData, SessionStore } from './types.ts';
