import type { StoredResponse, StoredResponseStore } from './types.ts';

interface Held {
  json: string;
  expiresAt: number;
}

/** Sweep expired responses every this many writes, so an embedded gateway's memory stays bounded. */
const SWEEP_EVERY = 256;

/**
 * Stored responses in process memory (embedded mode without Redis), expiring on the injected clock.
 * Records are kept as JSON, as in Redis, so a caller never shares objects with the store.
 */
export class MemoryStoredResponseStore implements StoredResponseStore {
  readonly #held = new Map<string, Held>();
  readonly #now: () => number;
  #writes = 0;

  constructor(now: () => number) {
    this.#now = now;
  }

  async put(projectId: string, record: StoredResponse, ttlMs: number): Promise<void> {
    if (++this.#writes % SWEEP_EVERY === 0) this.#sweep();
    this.#held.set(`${projectId}\n${record.id}`, {
      json: JSON.stringify(record),
      expiresAt: this.#now() + ttlMs,
    });
  }

  async get(projectId: string, id: string): Promise<StoredResponse | undefined> {
    const key = `${projectId}\n${id}`;
    const held = this.#held.get(key);
    if (!held) return undefined;
    if (held.expiresAt <= this.#now()) {
      this.#held.delete(key);
      return undefined;
    }
    return JSON.parse(held.json) as StoredResponse;
  }

  async delete(projectId: string, id: string): Promise<boolean> {
    const live = (await this.get(projectId, id)) !== undefined;
    this.#held.delete(`${projectId}\n${id}`);
    return live;
  }

  #sweep(): void {
    const now = this.#now();
    for (const [key, held] of this.#held) if (held.expiresAt <= now) this.#held.delete(key);
  }
}
