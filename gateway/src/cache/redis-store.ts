import type { StateClient } from '../state/connect.ts';
import { type CacheEntry, type CacheStore, cacheEntrySchema, MAX_ENTRY_BYTES } from './types.ts';

/** `switchyard:{p:<project>}:cache:<sha256>`: the project's hash tag, like every runtime-state key. */
export const cacheRedisKey = (projectId: string, key: string): string =>
  `switchyard:{p:${projectId}}:cache:${key}`;

/** The response cache in Redis: one GET per lookup, one SET PX per store, on the shared auto-pipelined client. */
export class RedisCacheStore implements CacheStore {
  readonly #client: StateClient;

  constructor(client: StateClient) {
    this.#client = client;
  }

  async get(projectId: string, key: string): Promise<CacheEntry | undefined> {
    const json = await this.#client.get(cacheRedisKey(projectId, key));
    if (json === null) return undefined;
    const parsed = cacheEntrySchema.safeParse(JSON.parse(json));
    return parsed.success ? (parsed.data as CacheEntry) : undefined;
  }

  async set(projectId: string, key: string, entry: CacheEntry, ttlSeconds: number): Promise<void> {
    const json = JSON.stringify(entry);
    if (json.length > MAX_ENTRY_BYTES) return;
    await this.#client.set(cacheRedisKey(projectId, key), json, 'PX', ttlSeconds * 1000);
  }

  /** The client belongs to the runtime state, which closes it. */
  async close(): Promise<void> {}
}
