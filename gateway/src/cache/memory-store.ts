import { type CacheEntry, type CacheStore, cacheEntrySchema, MAX_ENTRY_BYTES } from './types.ts';

/**
 * The response cache in process memory (embedded mode without Redis): a bounded LRU with expiry on
 * the injected clock. Entries are kept as JSON, so no request can change what the next one gets.
 */
export class MemoryCacheStore implements CacheStore {
  readonly #entries = new Map<string, { json: string; expiresAt: number }>();
  readonly #now: () => number;
  readonly #maxEntries: number;

  constructor(now: () => number, maxEntries = 10_000) {
    this.#now = now;
    this.#maxEntries = maxEntries;
  }

  async get(projectId: string, key: string): Promise<CacheEntry | undefined> {
    const id = `${projectId}\n${key}`;
    const held = this.#entries.get(id);
    if (!held) return undefined;
    this.#entries.delete(id);
    if (held.expiresAt <= this.#now()) return undefined;
    this.#entries.set(id, held); // most recently used last
    return cacheEntrySchema.parse(JSON.parse(held.json)) as CacheEntry;
  }

  async set(projectId: string, key: string, entry: CacheEntry, ttlSeconds: number): Promise<void> {
    const json = JSON.stringify(entry);
    if (json.length > MAX_ENTRY_BYTES) return;
    const id = `${projectId}\n${key}`;
    this.#entries.delete(id);
    this.#entries.set(id, { json, expiresAt: this.#now() + ttlSeconds * 1000 });
    while (this.#entries.size > this.#maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
  }

  async close(): Promise<void> {
    this.#entries.clear();
  }
}
