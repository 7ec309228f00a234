import type { RuntimeState } from '../state/types.ts';
import { MemoryCacheStore } from './memory-store.ts';
import { RedisCacheStore } from './redis-store.ts';
import type { CacheStore } from './types.ts';

const stores = new WeakMap<RuntimeState, CacheStore>();

/** The response cache of a runtime state: Redis on its shared client, else process memory. */
export function cacheStoreFor(state: RuntimeState, now: () => number): CacheStore {
  let store = stores.get(state);
  if (!store) {
    store = state.redis ? new RedisCacheStore(state.redis) : new MemoryCacheStore(now);
    stores.set(state, store);
  }
  return store;
}
