import type { StoredResponse, StoredResponseStore } from './types.ts';

interface Held {
  json: string;
  expiresAt: number;
}

interface Log {
  events: string[];
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
  readonly #logs = new Map<string, Log>();
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

  async transition(projectId: string, record: StoredResponse, from: readonly string[]): Promise<boolean> {
    const current = await this.get(projectId, record.id);
    if (!current || !from.includes(String(current.response.status))) return false;
    const held = this.#held.get(`${projectId}\n${record.id}`) as Held;
    held.json = JSON.stringify(record);
    return true;
  }

  async delete(projectId: string, id: string): Promise<boolean> {
    const live = (await this.get(projectId, id)) !== undefined;
    this.#held.delete(`${projectId}\n${id}`);
    this.#logs.delete(`${projectId}\n${id}`);
    return live;
  }

  async appendEvents(projectId: string, id: string, events: string[], ttlMs: number): Promise<void> {
    const key = `${projectId}\n${id}`;
    const log = this.#live(key) ?? { events: [], expiresAt: 0 };
    log.events.push(...events);
    log.expiresAt = this.#now() + ttlMs;
    this.#logs.set(key, log);
  }

  async events(projectId: string, id: string, from: number): Promise<string[]> {
    return this.#live(`${projectId}\n${id}`)?.events.slice(Math.max(0, from)) ?? [];
  }

  #live(key: string): Log | undefined {
    const log = this.#logs.get(key);
    if (log && log.expiresAt <= this.#now()) {
      this.#logs.delete(key);
      return undefined;
    }
    return log;
  }

  #sweep(): void {
    const now = this.#now();
    for (const [key, held] of this.#held) if (held.expiresAt <= now) this.#held.delete(key);
    for (const [key, log] of this.#logs) if (log.expiresAt <= now) this.#logs.delete(key);
  }
}
