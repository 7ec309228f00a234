import type { StateClient } from '../state/connect.ts';

/**
 * Where console sign-ins live: browser sessions, one-time sign-in links and sign-in attempt
 * counters. In runtime state (Redis when the gateway has it), so any pod serves a browser that
 * signed in on another; values are kept under the SHA-256 of their token, never the token itself.
 */
export interface ConsoleSessionStore {
  put(key: string, value: string, ttlMs: number): Promise<void>;
  get(key: string): Promise<string | undefined>;
  /** Reads and deletes at once: a one-time link is redeemed by exactly one browser. */
  take(key: string): Promise<string | undefined>;
  delete(key: string): Promise<void>;
  /** Counts one hit in the current window of `windowMs`; returns the count including this one. */
  hit(key: string, windowMs: number): Promise<number>;
}

const PREFIX = 'switchyard:{console}:';

interface Held {
  value: string;
  expiresAt: number;
}

export class MemoryConsoleSessionStore implements ConsoleSessionStore {
  readonly #items = new Map<string, Held>();
  readonly #now: () => number;

  constructor(now: () => number) {
    this.#now = now;
  }

  #live(key: string): Held | undefined {
    const it = this.#items.get(key);
    if (it && it.expiresAt > this.#now()) return it;
    if (it) this.#items.delete(key);
    return undefined;
  }

  #sweep(): void {
    // Bounded work, amortised: expired entries of abandoned sessions do not pile up.
    if (this.#items.size % 256 !== 0) return;
    const now = this.#now();
    for (const [k, v] of this.#items) if (v.expiresAt <= now) this.#items.delete(k);
  }

  async put(key: string, value: string, ttlMs: number): Promise<void> {
    this.#sweep();
    this.#items.set(key, { value, expiresAt: this.#now() + ttlMs });
  }

  async get(key: string): Promise<string | undefined> {
    return this.#live(key)?.value;
  }

  async take(key: string): Promise<string | undefined> {
    const it = this.#live(key);
    this.#items.delete(key);
    return it?.value;
  }

  async delete(key: string): Promise<void> {
    this.#items.delete(key);
  }

  async hit(key: string, windowMs: number): Promise<number> {
    const it = this.#live(key);
    const count = it ? Number(it.value) + 1 : 1;
    this.#sweep();
    this.#items.set(key, { value: String(count), expiresAt: it?.expiresAt ?? this.#now() + windowMs });
    return count;
  }
}

export class RedisConsoleSessionStore implements ConsoleSessionStore {
  readonly #redis: StateClient;

  constructor(redis: StateClient) {
    this.#redis = redis;
  }

  async put(key: string, value: string, ttlMs: number): Promise<void> {
    await this.#redis.set(PREFIX + key, value, 'PX', ttlMs);
  }

  async get(key: string): Promise<string | undefined> {
    return (await this.#redis.get(PREFIX + key)) ?? undefined;
  }

  async take(key: string): Promise<string | undefined> {
    return (await this.#redis.getdel(PREFIX + key)) ?? undefined;
  }

  async delete(key: string): Promise<void> {
    await this.#redis.del(PREFIX + key);
  }

  async hit(key: string, windowMs: number): Promise<number> {
    // A fixed window: the first hit of a window creates the counter with its expiry (SET NX), INCR
    // keeps that expiry (works on every Redis version, unlike PEXPIRE NX).
    const replies = await this.#redis
      .multi()
      .set(PREFIX + key, '0', 'PX', windowMs, 'NX')
      .incr(PREFIX + key)
      .exec();
    return Number(replies?.[1]?.[1] ?? 0);
  }
}
