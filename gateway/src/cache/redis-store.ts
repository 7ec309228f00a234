import type { StateClient } from '../state/connect.ts';
import { MemoryCacheStore } from './memory-store.ts';
import { type CacheEntry, type CacheStore, cacheEntrySchema, MAX_ENTRY_BYTES } from './types.ts';

/** `switchyard:{p:<project>}:cache:<sha256>`: the project's hash tag, like every runtime-state key. */
export const cacheRedisKey = (projectId: string, key: string): string =>
  `switchyard:{p:${projectId}}:cache:${key}`;

/** Entries this pod keeps next to Redis (a hot answer is then served without a round trip). */
const LOCAL_ENTRIES = 1000;

/**
 * The response cache in Redis: one GET (with its PTTL, same round trip) per lookup that this pod has
 * not seen yet, one SET PX per store, on the shared auto-pipelined client. A small local copy of
 * recently used entries expires when the Redis entry does; entries never change under a key (the
 * key covers the workflow's config version), so the copy cannot go stale.
 */
export class RedisCacheStore implements CacheStore {
  readonly #client: StateClient;
  readonly #local: MemoryCacheStore;
  readonly #now: () => number;

  constructor(client: StateClient, opts: { now?: () => number; localEntries?: number } = {}) {
    this.#client = client;
    // Redis expires on its own clock; the local copy follows the same (real) time.
    this.#now = opts.now ?? Date.now;
    this.#local = new MemoryCacheStore(this.#now, opts.localEntries ?? LOCAL_ENTRIES);
  }

  async get(projectId: string, key: string): Promise<CacheEntry | undefined> {
    const local = await this.#local.get(projectId, key);
    if (local) return local;
    const redisKey = cacheRedisKey(projectId, key);
    const [json, ttlMs] = await Promise.all([this.#client.get(redisKey), this.#client.pttl(redisKey)]);
    if (json === null) return undefined;
    const parsed = cacheEntrySchema.safeParse(JSON.parse(json));
    if (!parsed.success) return undefined;
    const entry = parsed.data as CacheEntry;
    if (ttlMs >= 1000) await this.#local.set(projectId, key, entry, Math.floor(ttlMs / 1000));
    return entry;
  }

  async set(projectId: string, key: string, entry: CacheEntry, ttlSeconds: number): Promise<void> {
    const json = JSON.stringify(entry);
    if (json.length > MAX_ENTRY_BYTES) return;
    await this.#client.set(cacheRedisKey(projectId, key), json, 'PX', ttlSeconds * 1000);
    await this.#local.set(projectId, key, entry, ttlSeconds);
  }

  /** The client belongs to the runtime state, which closes it. */
  async close(): Promise<void> {
    await this.#local.close();
  }
}
