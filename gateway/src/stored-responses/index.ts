import type { RuntimeState } from '../state/types.ts';
import { MemoryStoredResponseStore } from './memory-store.ts';
import { RedisStoredResponseStore } from './redis-store.ts';
import type { StoredResponseStore } from './types.ts';

export type { StoredResponse, StoredResponseStore } from './types.ts';

const stores = new WeakMap<RuntimeState, StoredResponseStore>();

/** The stored-response store of a runtime state: Redis on its shared client, else process memory. */
export function storedResponsesFor(state: RuntimeState, now: () => number): StoredResponseStore {
  let store = stores.get(state);
  if (!store) {
    store = state.redis ? new RedisStoredResponseStore(state.redis) : new MemoryStoredResponseStore(now);
    stores.set(state, store);
  }
  return store;
}
