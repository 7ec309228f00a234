import type { Fold, FoldResult, SessionData, SessionRef, SessionStore, Turn } from './types.ts';

interface Held {
  data: SessionData;
  expiresAt: number;
}

/** Sweep expired sessions every this many creations, so an embedded gateway's memory stays bounded. */
const SWEEP_EVERY = 256;

/**
 * Sessions in process memory (embedded mode without Redis). Same semantics as the Redis store: idle
 * expiry on the injected clock, appends and folds atomic (they run to completion on the event loop).
 */
export class MemorySessionStore implements SessionStore {
  readonly #projects = new Map<string, Map<string, Held>>();
  readonly #now: () => number;
  #created = 0;

  constructor(now: () => number) {
    this.#now = now;
  }

  #live(ref: SessionRef): Held | undefined {
    const held = this.#projects.get(ref.projectId)?.get(ref.sessionId);
    if (!held) return undefined;
    const now = this.#now();
    if (held.expiresAt <= now) {
      this.#projects.get(ref.projectId)?.delete(ref.sessionId);
      return undefined;
    }
    held.expiresAt = now + ref.ttlSeconds * 1000;
    return held;
  }

  async create(ref: SessionRef, workflow: string): Promise<void> {
    if (++this.#created % SWEEP_EVERY === 0) this.#sweep();
    let sessions = this.#projects.get(ref.projectId);
    if (!sessions) {
      sessions = new Map();
      this.#projects.set(ref.projectId, sessions);
    }
    const now = this.#now();
    sessions.set(ref.sessionId, {
      data: {
        id: ref.sessionId,
        workflow,
        createdAt: now,
        summary: '',
        summaryVersion: 0,
        summaryTokens: 0,
        foldedTurns: 0,
        turns: [],
      },
      expiresAt: now + ref.ttlSeconds * 1000,
    });
  }

  async load(ref: SessionRef): Promise<SessionData | undefined> {
    const held = this.#live(ref);
    // A copy: callers must not see later appends appear in what they loaded.
    return held ? { ...held.data, turns: [...held.data.turns] } : undefined;
  }

  async peek(projectId: string, sessionId: string) {
    const held = this.#projects.get(projectId)?.get(sessionId);
    if (!held || held.expiresAt <= this.#now()) return undefined;
    return { ...held.data, turns: [...held.data.turns], expiresAt: held.expiresAt };
  }

  async append(ref: SessionRef, turns: Turn[]): Promise<boolean> {
    const held = this.#live(ref);
    if (!held) return false;
    held.data.turns.push(...turns);
    return true;
  }

  async fold(ref: SessionRef, f: Fold): Promise<FoldResult> {
    const held = this.#live(ref);
    if (!held) return { applied: false, reason: 'gone' };
    const d = held.data;
    if (d.summaryVersion !== f.expectedVersion) return { applied: false, reason: 'stale' };
    d.turns.splice(f.start, f.end - f.start);
    d.summary = f.summary;
    d.summaryTokens = f.summaryTokens;
    d.summaryVersion++;
    d.foldedTurns += f.end - f.start;
    return { applied: true, version: d.summaryVersion };
  }

  async countActive(projectId: string): Promise<number> {
    const sessions = this.#projects.get(projectId);
    if (!sessions) return 0;
    const now = this.#now();
    let n = 0;
    for (const [id, held] of sessions) {
      if (held.expiresAt <= now) sessions.delete(id);
      else n++;
    }
    return n;
  }

  #sweep(): void {
    const now = this.#now();
    for (const sessions of this.#projects.values())
      for (const [id, held] of sessions) if (held.expiresAt <= now) sessions.delete(id);
  }

  async close(): Promise<void> {
    this.#projects.clear();
  }
}
