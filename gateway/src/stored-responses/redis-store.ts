import type { StateClient } from '../state/connect.ts';
import { STORED_RESPONSE_KEYS } from './keys.ts';
import { type StoredResponse, type StoredResponseStore, storedResponse } from './types.ts';

/**
 * Compare-and-set on the stored JSON's `response.status`: ARGV[1] is the new record, ARGV[2..] the
 * statuses it may replace. The caller builds the record, so nothing is re-encoded here.
 */
const TRANSITION = `
local cur = redis.call('GET', KEYS[1])
if not cur then return 0 end
local ok, doc = pcall(cjson.decode, cur)
if not ok or type(doc.response) ~= 'table' then return 0 end
local status = doc.response.status
for i = 2, #ARGV do
  if ARGV[i] == status then
    redis.call('SET', KEYS[1], ARGV[1], 'KEEPTTL')
    return 1
  end
end
return 0`;

const px = (ttlMs: number): number => Math.max(1, Math.round(ttlMs));

/**
 * Stored responses in Redis: one string per response with the project's retention as its TTL, so
 * every gateway process on the same Redis reads a response the moment its write returns. A
 * background streamed response's events are a list beside it, under the same hash tag.
 */
export class RedisStoredResponseStore implements StoredResponseStore {
  readonly #redis: StateClient;

  constructor(redis: StateClient) {
    this.#redis = redis;
  }

  async put(projectId: string, record: StoredResponse, ttlMs: number, responseJson?: string): Promise<void> {
    await this.#redis.set(
      STORED_RESPONSE_KEYS.response(projectId, record.id),
      recordJson(record, responseJson),
      'PX',
      px(ttlMs),
    );
  }

  async get(projectId: string, id: string): Promise<StoredResponse | undefined> {
    const json = await this.#redis.get(STORED_RESPONSE_KEYS.response(projectId, id));
    if (json === null) return undefined;
    return storedResponse.parse(JSON.parse(json));
  }

  async transition(projectId: string, record: StoredResponse, from: readonly string[]): Promise<boolean> {
    const key = STORED_RESPONSE_KEYS.response(projectId, record.id);
    return (await this.#redis.eval(TRANSITION, 1, key, JSON.stringify(record), ...from)) === 1;
  }

  async delete(projectId: string, id: string): Promise<boolean> {
    const [n] = await Promise.all([
      this.#redis.del(STORED_RESPONSE_KEYS.response(projectId, id)),
      this.#redis.del(STORED_RESPONSE_KEYS.events(projectId, id)),
    ]);
    return n > 0;
  }

  async appendEvents(projectId: string, id: string, events: string[], ttlMs: number): Promise<void> {
    if (events.length === 0) return;
    const key = STORED_RESPONSE_KEYS.events(projectId, id);
    const replies =
      (await this.#redis
        .multi()
        .rpush(key, ...events)
        .pexpire(key, px(ttlMs))
        .exec()) ?? [];
    for (const [err] of replies) if (err) throw err;
  }

  async events(projectId: string, id: string, from: number): Promise<string[]> {
    return this.#redis.lrange(STORED_RESPONSE_KEYS.events(projectId, id), Math.max(0, from), -1);
  }
}

/** The record as JSON, splicing in the answer's own serialization of `response` when there is one. */
export function recordJson(record: StoredResponse, responseJson?: string): string {
  if (responseJson === undefined) return JSON.stringify(record);
  const { response: _, ...rest } = record;
  // `rest` always holds `id`, so its JSON ends in `}` after at least one member.
  return `${JSON.stringify(rest).slice(0, -1)},"response":${responseJson}}`;
}
