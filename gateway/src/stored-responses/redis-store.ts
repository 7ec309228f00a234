import type { StateClient } from '../state/connect.ts';
import { STORED_RESPONSE_KEYS } from './keys.ts';
import { type StoredResponse, type StoredResponseStore, storedResponse } from './types.ts';

/**
 * Stored responses in Redis: one string per response with the project's retention as its TTL, so
 * every gateway process on the same Redis reads a response the moment its write returns.
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
      Math.max(1, Math.round(ttlMs)),
    );
  }

  async get(projectId: string, id: string): Promise<StoredResponse | undefined> {
    const json = await this.#redis.get(STORED_RESPONSE_KEYS.response(projectId, id));
    if (json === null) return undefined;
    return storedResponse.parse(JSON.parse(json));
  }

  async delete(projectId: string, id: string): Promise<boolean> {
    return (await this.#redis.del(STORED_RESPONSE_KEYS.response(projectId, id))) > 0;
  }
}

/** The record as JSON, splicing in the answer's own serialization of `response` when there is one. */
export function recordJson(record: StoredResponse, responseJson?: string): string {
  if (responseJson === undefined) return JSON.stringify(record);
  const { response: _, ...rest } = record;
  // `rest` always holds `id`, so its JSON ends in `}` after at least one member.
  return `${JSON.stringify(rest).slice(0, -1)},"response":${responseJson}}`;
}
