import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { z } from 'zod';
import { dedicatedConnection } from '../async/connections.ts';
import type { StateClient } from '../state/connect.ts';

/**
 * Legacy-era MCP sessions, kept where every pod finds them: any pod serves any session, and a pod
 * that dies takes nothing of a session with it. The record is what the client said at `initialize`
 * and whose key opened it; the upstream connections are each pod's own (upstreams.ts), opened again
 * by whichever pod serves the next call.
 */
export const mcpSession = z.object({
  /** `<namespace>/<name>` of the ApiKey that opened it: another key's request never finds it. */
  keyId: z.string(),
  protocolVersion: z.string(),
  clientCapabilities: z.record(z.string(), z.unknown()),
  clientInfo: z.record(z.string(), z.unknown()).optional(),
  createdAt: z.number(),
});
export type McpSession = z.infer<typeof mcpSession>;

/** A change of a project's catalogue, told to every pod's open streams. */
export interface ListChange {
  projectId: string;
  kind: 'tools' | 'resources' | 'prompts';
}

export interface McpSessionStore {
  create(projectId: string, session: McpSession, ttlMs: number): Promise<string>;
  /** The session, its expiry pushed back by `ttlMs`; undefined when unknown or expired. */
  touch(projectId: string, id: string, ttlMs: number): Promise<McpSession | undefined>;
  delete(projectId: string, id: string): Promise<boolean>;
  publish(change: ListChange): Promise<void>;
  listen(listener: (change: ListChange) => void): () => void;
  close(): Promise<void>;
}

/** 32 random bytes, base64url: unguessable, and visible ASCII as the spec requires. */
export function newSessionId(): string {
  return randomBytes(32).toString('base64url');
}

const SESSION_ID = /^[A-Za-z0-9_-]{43}$/;
export function isSessionId(value: string): boolean {
  return SESSION_ID.test(value);
}

const key = (projectId: string, id: string): string => `switchyard:{p:${projectId}}:mcp:session:${id}`;
const CHANNEL = 'switchyard:mcp:list-changed';

export class MemoryMcpSessionStore implements McpSessionStore {
  readonly #sessions = new Map<string, { session: McpSession; expiresAt: number }>();
  readonly #listeners = new Set<(c: ListChange) => void>();
  readonly #now: () => number;

  constructor(now: () => number) {
    this.#now = now;
  }

  async create(projectId: string, session: McpSession, ttlMs: number): Promise<string> {
    const id = newSessionId();
    this.#sessions.set(key(projectId, id), { session, expiresAt: this.#now() + ttlMs });
    return id;
  }

  async touch(projectId: string, id: string, ttlMs: number): Promise<McpSession | undefined> {
    const k = key(projectId, id);
    const held = this.#sessions.get(k);
    if (!held) return undefined;
    if (held.expiresAt <= this.#now()) {
      this.#sessions.delete(k);
      return undefined;
    }
    held.expiresAt = this.#now() + ttlMs;
    return held.session;
  }

  async delete(projectId: string, id: string): Promise<boolean> {
    return this.#sessions.delete(key(projectId, id));
  }

  async publish(change: ListChange): Promise<void> {
    for (const l of this.#listeners) l(change);
  }

  listen(listener: (change: ListChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.#listeners.clear();
  }
}

export class RedisMcpSessionStore implements McpSessionStore {
  readonly #redis: StateClient;
  readonly #logger: Logger;
  /** Subscribed with the first open stream: a pod that holds none keeps no extra connection. */
  #sub: StateClient | undefined;
  readonly #listeners = new Set<(c: ListChange) => void>();

  constructor(redis: StateClient, logger: Logger) {
    this.#redis = redis;
    this.#logger = logger;
  }

  #subscribe(): void {
    if (this.#sub) return;
    const logger = this.#logger;
    const sub = dedicatedConnection(this.#redis, 'switchyard-mcp');
    this.#sub = sub;
    sub.on('error', (err: Error) => logger.warn({ msg: 'mcp: list-changed bus problem', err: err.message }));
    sub.on('message', (_channel: string, raw: string) => {
      let change: ListChange;
      try {
        change = JSON.parse(raw) as ListChange;
      } catch {
        return;
      }
      for (const l of this.#listeners) l(change);
    });
    void sub
      .subscribe(CHANNEL)
      .catch((err: Error) => logger.error({ msg: 'mcp: cannot subscribe', err: err.message }));
  }

  async create(projectId: string, session: McpSession, ttlMs: number): Promise<string> {
    const id = newSessionId();
    await this.#redis.set(key(projectId, id), JSON.stringify(session), 'PX', ttlMs);
    return id;
  }

  async touch(projectId: string, id: string, ttlMs: number): Promise<McpSession | undefined> {
    const raw = await this.#redis.getex(key(projectId, id), 'PX', ttlMs);
    if (raw === null) return undefined;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      return undefined; // an unreadable record is no session: the client initializes again
    }
    const parsed = mcpSession.safeParse(value);
    return parsed.success ? parsed.data : undefined;
  }

  async delete(projectId: string, id: string): Promise<boolean> {
    return (await this.#redis.del(key(projectId, id))) === 1;
  }

  async publish(change: ListChange): Promise<void> {
    await this.#redis.publish(CHANNEL, JSON.stringify(change));
  }

  listen(listener: (change: ListChange) => void): () => void {
    this.#subscribe();
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.#listeners.clear();
    this.#sub?.disconnect();
  }
}
