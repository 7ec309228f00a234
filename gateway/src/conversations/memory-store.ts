import type { ConversationItem, ConversationObject, ConversationStore, ItemDeleted } from './types.ts';

interface Held {
  conv: string;
  items: string[];
  expiresAt: number;
}

/** Sweep expired conversations every this many writes, so an embedded gateway's memory stays bounded. */
const SWEEP_EVERY = 256;

/**
 * Conversations in process memory (embedded mode without Redis), expiring on the injected clock.
 * Kept as JSON, as in Redis, so a caller never shares objects with the store.
 */
export class MemoryConversationStore implements ConversationStore {
  readonly #held = new Map<string, Held>();
  readonly #now: () => number;
  #writes = 0;

  constructor(now: () => number) {
    this.#now = now;
  }

  async create(
    projectId: string,
    conv: ConversationObject,
    items: ConversationItem[],
    ttlMs: number,
  ): Promise<void> {
    if (++this.#writes % SWEEP_EVERY === 0) this.#sweep();
    this.#held.set(`${projectId}\n${conv.id}`, {
      conv: JSON.stringify(conv),
      items: items.map((i) => JSON.stringify(i)),
      expiresAt: this.#now() + ttlMs,
    });
  }

  async get(projectId: string, id: string): Promise<ConversationObject | undefined> {
    const held = this.#live(projectId, id);
    return held ? (JSON.parse(held.conv) as ConversationObject) : undefined;
  }

  async items(projectId: string, id: string): Promise<ConversationItem[] | undefined> {
    return this.#live(projectId, id)?.items.map((j) => JSON.parse(j) as ConversationItem);
  }

  async update(projectId: string, conv: ConversationObject, ttlMs: number): Promise<boolean> {
    const held = this.#live(projectId, conv.id);
    if (!held) return false;
    held.conv = JSON.stringify(conv);
    held.expiresAt = this.#now() + ttlMs;
    return true;
  }

  async append(projectId: string, id: string, items: ConversationItem[], ttlMs: number): Promise<boolean> {
    const held = this.#live(projectId, id);
    if (!held) return false;
    held.items.push(...items.map((i) => JSON.stringify(i)));
    held.expiresAt = this.#now() + ttlMs;
    return true;
  }

  async deleteItem(projectId: string, id: string, itemId: string): Promise<ItemDeleted> {
    const held = this.#live(projectId, id);
    if (!held) return 'no_conversation';
    const at = held.items.findIndex((j) => (JSON.parse(j) as ConversationItem).id === itemId);
    if (at < 0) return 'no_item';
    held.items.splice(at, 1);
    return 'deleted';
  }

  /** Turn locks: token and expiry, by conversation. */
  readonly #locks = new Map<string, { token: string; expiresAt: number }>();

  async tryLock(projectId: string, id: string, token: string, ttlMs: number): Promise<boolean> {
    const key = `${projectId}\n${id}`;
    const held = this.#locks.get(key);
    if (held && held.expiresAt > this.#now()) return false;
    this.#locks.set(key, { token, expiresAt: this.#now() + ttlMs });
    return true;
  }

  async renewLock(projectId: string, id: string, token: string, ttlMs: number): Promise<boolean> {
    const held = this.#locks.get(`${projectId}\n${id}`);
    if (held?.token !== token || held.expiresAt <= this.#now()) return false;
    held.expiresAt = this.#now() + ttlMs;
    return true;
  }

  async unlock(projectId: string, id: string, token: string): Promise<void> {
    const key = `${projectId}\n${id}`;
    if (this.#locks.get(key)?.token === token) this.#locks.delete(key);
  }

  async delete(projectId: string, id: string): Promise<boolean> {
    const live = this.#live(projectId, id) !== undefined;
    this.#held.delete(`${projectId}\n${id}`);
    return live;
  }

  #live(projectId: string, id: string): Held | undefined {
    const key = `${projectId}\n${id}`;
    const held = this.#held.get(key);
    if (!held) return undefined;
    if (held.expiresAt > this.#now()) return held;
    this.#held.delete(key);
    return undefined;
  }

  #sweep(): void {
    const now = this.#now();
    for (const [key, held] of this.#held) if (held.expiresAt <= now) this.#held.delete(key);
  }
}
