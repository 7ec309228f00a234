import type { StateClient } from '../state/connect.ts';
import { CONVERSATION_KEYS as KEYS } from './keys.ts';
import {
  type ConversationItem,
  type ConversationObject,
  type ConversationStore,
  conversationObject,
  type ItemDeleted,
} from './types.ts';

const px = (ttlMs: number): number => Math.max(1, Math.round(ttlMs));

/** Only the holder's token renews (ARGV[2] set: PEXPIRE) or frees (DEL) the lock. */
const HOLDER = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return redis.call('DEL', KEYS[1])`;

/**
 * Conversations in Redis: the object as a string and its items as a list, both under the project's
 * hash tag (one slot, so a MULTI covers both) and both expiring with the project's retention, pushed
 * back on every write. Every gateway process on the same Redis reads a write the moment it returns.
 */
export class RedisConversationStore implements ConversationStore {
  readonly #redis: StateClient;

  constructor(redis: StateClient) {
    this.#redis = redis;
  }

  async create(
    projectId: string,
    conv: ConversationObject,
    items: ConversationItem[],
    ttlMs: number,
  ): Promise<void> {
    const tx = this.#redis
      .multi()
      .set(KEYS.conversation(projectId, conv.id), JSON.stringify(conv), 'PX', px(ttlMs));
    if (items.length > 0)
      tx.rpush(KEYS.items(projectId, conv.id), ...items.map((i) => JSON.stringify(i))).pexpire(
        KEYS.items(projectId, conv.id),
        px(ttlMs),
      );
    await exec(tx);
  }

  async get(projectId: string, id: string): Promise<ConversationObject | undefined> {
    const json = await this.#redis.get(KEYS.conversation(projectId, id));
    return json === null ? undefined : conversationObject.parse(JSON.parse(json));
  }

  async items(projectId: string, id: string): Promise<ConversationItem[] | undefined> {
    const [conv, list] = await Promise.all([
      this.#redis.exists(KEYS.conversation(projectId, id)),
      this.#redis.lrange(KEYS.items(projectId, id), 0, -1),
    ]);
    if (conv === 0) return undefined;
    return list.map((j) => JSON.parse(j) as ConversationItem);
  }

  async update(projectId: string, conv: ConversationObject, ttlMs: number): Promise<boolean> {
    const [set] = await exec(
      this.#redis
        .multi()
        .set(KEYS.conversation(projectId, conv.id), JSON.stringify(conv), 'PX', px(ttlMs), 'XX')
        .pexpire(KEYS.items(projectId, conv.id), px(ttlMs)),
    );
    return set === 'OK';
  }

  async append(projectId: string, id: string, items: ConversationItem[], ttlMs: number): Promise<boolean> {
    if (items.length === 0) return (await this.#redis.exists(KEYS.conversation(projectId, id))) === 1;
    const [live] = await exec(
      this.#redis
        .multi()
        .pexpire(KEYS.conversation(projectId, id), px(ttlMs))
        .rpush(KEYS.items(projectId, id), ...items.map((i) => JSON.stringify(i)))
        .pexpire(KEYS.items(projectId, id), px(ttlMs)),
    );
    if (live === 1) return true;
    // Deleted meanwhile (or never there): the pushed items go with it.
    await this.#redis.del(KEYS.items(projectId, id));
    return false;
  }

  async deleteItem(projectId: string, id: string, itemId: string): Promise<ItemDeleted> {
    const [conv, list] = await Promise.all([
      this.#redis.exists(KEYS.conversation(projectId, id)),
      this.#redis.lrange(KEYS.items(projectId, id), 0, -1),
    ]);
    if (conv === 0) return 'no_conversation';
    const json = list.find((j) => (JSON.parse(j) as ConversationItem).id === itemId);
    if (json === undefined) return 'no_item';
    return (await this.#redis.lrem(KEYS.items(projectId, id), 1, json)) > 0 ? 'deleted' : 'no_item';
  }

  async tryLock(projectId: string, id: string, token: string, ttlMs: number): Promise<boolean> {
    return (await this.#redis.set(KEYS.lock(projectId, id), token, 'PX', px(ttlMs), 'NX')) === 'OK';
  }

  async renewLock(projectId: string, id: string, token: string, ttlMs: number): Promise<boolean> {
    return (await this.#redis.eval(HOLDER, 1, KEYS.lock(projectId, id), token, String(px(ttlMs)))) === 1;
  }

  async unlock(projectId: string, id: string, token: string): Promise<void> {
    await this.#redis.eval(HOLDER, 1, KEYS.lock(projectId, id), token);
  }

  async delete(projectId: string, id: string): Promise<boolean> {
    const [n] = await exec(
      this.#redis.multi().del(KEYS.conversation(projectId, id)).del(KEYS.items(projectId, id)),
    );
    return n === 1;
  }
}

/** The replies of a MULTI, each command's error thrown. */
async function exec(tx: ReturnType<StateClient['multi']>): Promise<unknown[]> {
  const replies = (await tx.exec()) ?? [];
  return replies.map(([err, value]) => {
    if (err) throw err;
    return value;
  });
}
