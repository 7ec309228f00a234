import type { RuntimeState } from '../state/types.ts';
import { MemorySessionStore } from './memory-store.ts';
import { RedisSessionStore } from './redis-store.ts';
import type { SessionStore } from './types.ts';

const stores = new WeakMap<RuntimeState, SessionStore>();

/**
 * The session store of a runtime state: Redis on its shared client, else process memory. One per
 * state, so the pipeline stage and the console route (GET /v1/sessions/{id}) read the same sessions.
 */
export function sessionStoreFor(state: RuntimeState, now: () => number): SessionStore {
  let store = stores.get(state);
  if (!store) {
    store = state.redis ? new RedisSessionStore(state.redis, now) : new MemorySessionStore(now);
    stores.set(state, store);
  }
  return store;
}
