import type { StateClient } from '../state/connect.ts';
import { SESSION_KEYS } from './keys.ts';
import { defineSessionScripts, type SessionScripts } from './redis-scripts.ts';
import {
  type Fold,
  type FoldResult,
  type SessionData,
  type SessionRef,
  type SessionStore,
  type Turn,
  turnSchema,
} from './types.ts';

const keysOf = (ref: SessionRef): [string, string, string] => [
  SESSION_KEYS.meta(ref.projectId, ref.sessionId),
  SESSION_KEYS.turns(ref.projectId, ref.sessionId),
  SESSION_KEYS.index(ref.projectId),
];

function fieldsOf(list: string[]): Map<string, string> {
  const m = new Map<string, string>();
  for (let i = 0; i + 1 < list.length; i += 2) m.set(list[i]!, list[i + 1]!);
  return m;
}

function dataOf(id: string, metaList: string[], turnList: string[]): SessionData {
  const meta = fieldsOf(metaList);
  return {
    id,
    workflow: meta.get('w') ?? '',
    createdAt: Number(meta.get('c') ?? 0),
    summary: meta.get('s') ?? '',
    summaryVersion: Number(meta.get('v') ?? 0),
    summaryTokens: Number(meta.get('st') ?? 0),
    foldedTurns: Number(meta.get('f') ?? 0),
    turns: turnList.map((t) => turnSchema.parse(JSON.parse(t)) as Turn),
  };
}

/**
 * Sessions in Redis (or a Redis Cluster) on the runtime-state client: one script call per load,
 * append or fold, each atomic, so any number of gateways appending to one session lose no turn.
 */
export class RedisSessionStore implements SessionStore {
  readonly #client: StateClient;
  readonly #scripts: SessionScripts;
  readonly #now: () => number;

  constructor(client: StateClient, now: () => number) {
    this.#client = client;
    this.#scripts = defineSessionScripts(client);
    this.#now = now;
  }

  async create(ref: SessionRef, workflow: string): Promise<void> {
    await this.#scripts.create(keysOf(ref), this.#now(), ref.ttlSeconds * 1000, ref.sessionId, workflow);
  }

  async load(ref: SessionRef): Promise<SessionData | undefined> {
    const got = await this.#scripts.load(keysOf(ref), this.#now(), ref.ttlSeconds * 1000, ref.sessionId);
    return got ? dataOf(ref.sessionId, got[0], got[1]) : undefined;
  }

  async peek(projectId: string, sessionId: string) {
    const ref = { projectId, sessionId, ttlSeconds: 0 };
    const got = await this.#scripts.peek(keysOf(ref));
    return got
      ? { ...dataOf(sessionId, got[0], got[1]), expiresAt: this.#now() + Math.max(0, got[2]) }
      : undefined;
  }

  async append(ref: SessionRef, turns: Turn[]): Promise<boolean> {
    if (turns.length === 0) return true;
    const ok = await this.#scripts.append(
      keysOf(ref),
      this.#now(),
      ref.ttlSeconds * 1000,
      ref.sessionId,
      ...turns.map((t) => JSON.stringify(t)),
    );
    return ok === 1;
  }

  async fold(ref: SessionRef, f: Fold): Promise<FoldResult> {
    const r = await this.#scripts.fold(
      keysOf(ref),
      this.#now(),
      ref.ttlSeconds * 1000,
      ref.sessionId,
      f.expectedVersion,
      f.start,
      f.end,
      f.summary,
      f.summaryTokens,
    );
    if (r === -1) return { applied: false, reason: 'gone' };
    if (r === 0) return { applied: false, reason: 'stale' };
    return { applied: true, version: r };
  }

  async countActive(projectId: string): Promise<number> {
    const key = SESSION_KEYS.index(projectId);
    const [, count] = await Promise.all([
      this.#client.zremrangebyscore(key, '-inf', this.#now()),
      this.#client.zcard(key),
    ]);
    return count;
  }

  /** The client belongs to the runtime state, which closes it. */
  async close(): Promise<void> {}
}
