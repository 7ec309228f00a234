import { defineScript, replies, type Script, WEBHOOK_STATE_KEYS } from '#contract';
import type { StateClient } from '../state/connect.ts';

/** A delivery that used up its retries (or hit a disabled endpoint), kept for inspection and replay. */
export interface DeadLetter {
  /** The webhook-id; a replay sends the same one. */
  id: string;
  url: string;
  event: string;
  body: string;
  attempts: number;
  last_status: number | null;
  last_error: string | null;
  /** Unix ms. */
  dead_at: number;
  replays: number;
}

/** Dead letters and disabled endpoints (a receiver answered 410), per project. */
export interface WebhookStore {
  deadLetter(projectId: string, d: DeadLetter): Promise<void>;
  /** Oldest first, dead at or after `sinceMs`. */
  listDeadLetters(projectId: string, sinceMs: number, limit: number): Promise<DeadLetter[]>;
  /** Removes and returns it, atomically: two concurrent replays of one letter send it once. */
  takeDeadLetter(projectId: string, id: string): Promise<DeadLetter | undefined>;
  countDeadLetters(projectId: string): Promise<number>;
  disable(projectId: string, url: string, atMs: number): Promise<void>;
  enable(projectId: string, url: string): Promise<void>;
  isDisabled(projectId: string, url: string): Promise<boolean>;
  disabledEndpoints(projectId: string): Promise<string[]>;
}

export class MemoryWebhookStore implements WebhookStore {
  readonly #dead = new Map<string, Map<string, DeadLetter>>();
  readonly #disabled = new Map<string, Map<string, number>>();

  #of<T>(m: Map<string, Map<string, T>>, p: string): Map<string, T> {
    let v = m.get(p);
    if (!v) {
      v = new Map();
      m.set(p, v);
    }
    return v;
  }

  async deadLetter(projectId: string, d: DeadLetter): Promise<void> {
    this.#of(this.#dead, projectId).set(d.id, d);
  }
  async listDeadLetters(projectId: string, sinceMs: number, limit: number): Promise<DeadLetter[]> {
    return [...this.#of(this.#dead, projectId).values()]
      .filter((d) => d.dead_at >= sinceMs)
      .sort((a, b) => a.dead_at - b.dead_at)
      .slice(0, limit);
  }
  async takeDeadLetter(projectId: string, id: string): Promise<DeadLetter | undefined> {
    const m = this.#of(this.#dead, projectId);
    const d = m.get(id);
    m.delete(id);
    return d;
  }
  async countDeadLetters(projectId: string): Promise<number> {
    return this.#of(this.#dead, projectId).size;
  }
  async disable(projectId: string, url: string, atMs: number): Promise<void> {
    this.#of(this.#disabled, projectId).set(url, atMs);
  }
  async enable(projectId: string, url: string): Promise<void> {
    this.#of(this.#disabled, projectId).delete(url);
  }
  async isDisabled(projectId: string, url: string): Promise<boolean> {
    return this.#of(this.#disabled, projectId).has(url);
  }
  async disabledEndpoints(projectId: string): Promise<string[]> {
    return [...this.#of(this.#disabled, projectId).keys()];
  }
}

const KEYS = WEBHOOK_STATE_KEYS;

const TAKE = `
local v = redis.call('HGET', KEYS[2], ARGV[1])
if not v then return false end
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('ZREM', KEYS[1], ARGV[1])
return v
`;

export class RedisWebhookStore implements WebhookStore {
  readonly #redis: StateClient;
  readonly #take: Script<string | null>;
  constructor(redis: StateClient) {
    this.#redis = redis;
    this.#take = defineScript(redis, 'switchyardDeadLetterTake', TAKE, replies.stringOrNil);
  }

  async deadLetter(projectId: string, d: DeadLetter): Promise<void> {
    await this.#redis
      .multi()
      .hset(KEYS.deadItems(projectId), d.id, JSON.stringify(d))
      .zadd(KEYS.deadIndex(projectId), d.dead_at, d.id)
      .exec();
  }
  async listDeadLetters(projectId: string, sinceMs: number, limit: number): Promise<DeadLetter[]> {
    const ids = await this.#redis.zrangebyscore(
      KEYS.deadIndex(projectId),
      sinceMs,
      '+inf',
      'LIMIT',
      0,
      limit,
    );
    if (ids.length === 0) return [];
    const raw = await this.#redis.hmget(KEYS.deadItems(projectId), ...ids);
    return raw.filter((r): r is string => r !== null).map((r) => JSON.parse(r) as DeadLetter);
  }
  async takeDeadLetter(projectId: string, id: string): Promise<DeadLetter | undefined> {
    const v = await this.#take([KEYS.deadIndex(projectId), KEYS.deadItems(projectId)], [id]);
    return v ? (JSON.parse(v) as DeadLetter) : undefined;
  }
  async countDeadLetters(projectId: string): Promise<number> {
    return this.#redis.zcard(KEYS.deadIndex(projectId));
  }
  async disable(projectId: string, url: string, atMs: number): Promise<void> {
    await this.#redis.hset(KEYS.disabled(projectId), url, String(atMs));
  }
  async enable(projectId: string, url: string): Promise<void> {
    await this.#redis.hdel(KEYS.disabled(projectId), url);
  }
  async isDisabled(projectId: string, url: string): Promise<boolean> {
    return (await this.#redis.hexists(KEYS.disabled(projectId), url)) === 1;
  }
  async disabledEndpoints(projectId: string): Promise<string[]> {
    return this.#redis.hkeys(KEYS.disabled(projectId));
  }
}
