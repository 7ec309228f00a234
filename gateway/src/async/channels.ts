import type { WrappedBody } from '../encoders/native.ts';
import type { TraceContext } from '../tracing/types.ts';

/**
 * One async request's state (docs/api.md, "Async requests, WebSocket and webhooks"): pending → completed |
 * failed, or for a pipeline workflow pending → awaiting_callback → completed | timed_out.
 */
/** A `response` payload: the wrapped body; a timeout or job failure carries `error.code`. */
export type ResultBody = Omit<WrappedBody, 'error'> & {
  error?: { message: string; code?: string; details: { status: number; message: string } };
};

export type ChannelState = 'pending' | 'awaiting_callback' | 'completed' | 'failed' | 'timed_out';

export const TERMINAL_STATES: readonly ChannelState[] = ['completed', 'failed', 'timed_out'];

export interface ChannelDoc {
  channel_id: string;
  project_id: string;
  workflow: string | null;
  event_name: string | null;
  session_id: string | null;
  /** Unix ms. */
  created_at: number;
  updated_at: number;
  /** Pipeline workflows: when the callback window closes (Unix ms). */
  deadline_at: number | null;
  /** Pipeline workflows: the generated answer the callback's data is merged over. */
  ai_response: ResultBody | null;
  /** The final payload (the `response` event); null until the channel is terminal. */
  result: ResultBody | null;
  /** `{base_url}` the request came in on: callback_url is built from it. */
  base_url: string;
  /** The accepting request's trace context (tracing on): its callback and timeout continue that trace. */
  trace?: TraceContext;
}

/** The socket topic a channel's result is pushed on (the ack names it; clients join it). */
export const topicOf = (projectId: string, channelId: string): string =>
  `ai_response:${projectId}:${channelId}`;

export interface ChannelRecord {
  state: ChannelState;
  doc: ChannelDoc;
}

export type TransitionResult = { ok: true } | { ok: false; current: ChannelState | undefined };

/**
 * Where channels live (Redis, or memory in embedded mode). `transition` is the one atomic step:
 * it moves a channel only from one of the `from` states, so of two pods finishing the same job,
 * or a callback racing its deadline, exactly one wins.
 */
export interface ChannelStore {
  create(rec: ChannelRecord, ttlSec: number): Promise<void>;
  get(projectId: string, channelId: string): Promise<ChannelRecord | undefined>;
  transition(
    projectId: string,
    channelId: string,
    from: readonly ChannelState[],
    to: ChannelRecord,
  ): Promise<TransitionResult>;
}

export class MemoryChannelStore implements ChannelStore {
  readonly #items = new Map<string, { state: ChannelState; doc: string; expiresAt: number }>();
  readonly #now: () => number;

  constructor(now: () => number) {
    this.#now = now;
  }

  #key = (p: string, c: string) => `${p}\n${c}`;

  async create(rec: ChannelRecord, ttlSec: number): Promise<void> {
    this.#sweep();
    this.#items.set(this.#key(rec.doc.project_id, rec.doc.channel_id), {
      state: rec.state,
      doc: JSON.stringify(rec.doc),
      expiresAt: this.#now() + ttlSec * 1000,
    });
  }

  async get(projectId: string, channelId: string): Promise<ChannelRecord | undefined> {
    const it = this.#items.get(this.#key(projectId, channelId));
    if (!it || it.expiresAt <= this.#now()) return undefined;
    return { state: it.state, doc: JSON.parse(it.doc) as ChannelDoc };
  }

  async transition(
    projectId: string,
    channelId: string,
    from: readonly ChannelState[],
    to: ChannelRecord,
  ): Promise<TransitionResult> {
    const it = this.#items.get(this.#key(projectId, channelId));
    if (!it || it.expiresAt <= this.#now()) return { ok: false, current: undefined };
    if (!from.includes(it.state)) return { ok: false, current: it.state };
    // Serialised before anything changes, as on Redis: a doc that cannot be stored leaves the channel as it was.
    const doc = JSON.stringify(to.doc);
    it.state = to.state;
    it.doc = doc;
    return { ok: true };
  }

  /** Expired channels go on the next create, so memory mode holds a bounded set. */
  #sweep(): void {
    if (this.#items.size % 1024 !== 0) return;
    const now = this.#now();
    for (const [k, v] of this.#items) if (v.expiresAt <= now) this.#items.delete(k);
  }
}
