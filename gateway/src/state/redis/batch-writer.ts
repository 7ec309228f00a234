import type { Logger } from 'pino';
import type { StateClient } from '../connect.ts';
import type { StateWriteMetrics } from '../metrics.ts';
import type { StateWrite } from '../types.ts';
import { BoundedQueue } from './bounded-queue.ts';
import { isRetryable } from './errors.ts';
import { batchCall, MAX_ACKS } from './write-batch.ts';
import { countWrite, DropReport } from './write-drops.ts';
import { defineWrite } from './write-script.ts';

export interface BatchWriterOptions {
  client: StateClient;
  logger: Logger;
  metrics: StateWriteMetrics;
  /** This writer's name in the applied-batches hash (write-script.ts). */
  writer: string;
  maxBuffered: number;
  retryBaseMs: number;
  retryMaxMs: number;
  flushMs: number;
  now: () => number;
}

/** Writes re-sent per round while draining the buffer (one script call per project among them). */
const DRAIN_CHUNK = 256;
/** A window's batch goes out at once when it reaches this many settlements. */
const FLUSH_AT = DRAIN_CHUNK;

type Outcome = 'ok' | 'retry' | 'dropped';

/**
 * The write path of the Redis runtime state. A project's writes of one flush window (`flushMs`) are
 * one script call (write-script.ts: one round trip, applied whole or not at all); while Redis cannot
 * take them, they wait in a bounded buffer that drains as soon as the client is ready again. A batch
 * keeps its id when it is sent again, so one whose first reply was lost is not written twice.
 */
export class BatchWriter {
  readonly #client: StateClient;
  readonly #logger: Logger;
  readonly #metrics: StateWriteMetrics;
  readonly #drops: DropReport;
  readonly #buffer: BoundedQueue<StateWrite>;
  readonly #retryBaseMs: number;
  readonly #retryMaxMs: number;
  readonly #flushMs: number;
  readonly #writeScript: ReturnType<typeof defineWrite>;
  readonly #writer: string;
  /** This window's writes, by project: one script call each when the window closes. */
  #pending = new Map<string, StateWrite[]>();
  #pendingCount = 0;
  #pendingTimer: NodeJS.Timeout | undefined;
  /** The sends of the last window, so a read can wait for this pod's own writes. */
  #lastSent: Promise<unknown> = Promise.resolve();
  readonly #sendPendingNow = () => this.#sendPending();
  #inflight = 0;
  #draining = false;
  #timer: NodeJS.Timeout | undefined;
  #failedRounds = 0;
  #closed = false;
  #idle: (() => void)[] = [];
  #outage = false;
  #batchSeq = 0;
  /** The batch id of settlements sent once and buffered again: they go out again under it. */
  readonly #batchOf = new WeakMap<StateWrite, string>();
  /** Per project, ids of batches whose reply was seen: the next batch lets Redis forget them. */
  readonly #acks = new Map<string, string[]>();
  readonly #onReady = () => {
    this.#failedRounds = 0;
    if (this.#buffer.size > 0) this.#drainSoon(0);
  };

  constructor(opts: BatchWriterOptions) {
    this.#client = opts.client;
    this.#logger = opts.logger;
    this.#metrics = opts.metrics;
    this.#drops = new DropReport(opts.logger, opts.metrics, opts.now);
    this.#buffer = new BoundedQueue(opts.maxBuffered);
    this.#retryBaseMs = opts.retryBaseMs;
    this.#retryMaxMs = opts.retryMaxMs;
    this.#flushMs = opts.flushMs;
    this.#writer = opts.writer;
    this.#writeScript = defineWrite(this.#client);
    this.#client.on('ready', this.#onReady);
  }

  write(s: StateWrite): void {
    if (this.#closed) {
      this.#drops.drop(s, 'state layer closed');
      return;
    }
    // Behind a non-empty buffer, a new write queues too, so entries reach the log in order.
    if (this.#buffer.size > 0 || this.#draining || this.#client.status !== 'ready') {
      this.#enqueue(s);
      return;
    }
    let batch = this.#pending.get(s.projectId);
    if (!batch) {
      batch = [];
      this.#pending.set(s.projectId, batch);
      if (this.#pendingCount === 0) {
        this.#inflight++;
        // Ref'd: a process must not exit with a window open (close() sends it through flush()).
        if (this.#flushMs > 0) this.#pendingTimer = setTimeout(this.#sendPendingNow, this.#flushMs);
        else setImmediate(this.#sendPendingNow);
      }
    }
    batch.push(s);
    if (++this.#pendingCount >= FLUSH_AT) this.#sendPending();
  }

  /** Sends the open window and resolves when its calls are answered: a read sees this pod's writes. */
  async ownWrites(): Promise<void> {
    this.#sendPending();
    await this.#lastSent;
  }

  /** Sends the open window now; resolves once nothing is in flight or buffered (written or dropped). */
  flush(): Promise<void> {
    this.#sendPending();
    if (this.#inflight === 0 && !this.#draining && this.#buffer.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Stops taking writes; waits up to `waitMs` for what is open or buffered, then drops the rest. */
  async close(waitMs: number): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.flush(), new Promise((r) => (timer = setTimeout(r, waitMs)))]);
    clearTimeout(timer);
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const unflushed = this.#buffer.size + this.#inflight;
    for (const s of this.#buffer.take(this.#buffer.size))
      this.#drops.drop(s, 'shut down with redis unreachable');
    if (unflushed > 0)
      this.#logger.error({
        msg: 'state: shut down before these request-log entries and usage increments were written',
        unflushed_settlements: unflushed,
        redis: this.#client.status,
      });
    this.#metrics.bufferSize.set(0);
    this.#drops.report();
    this.#client.off('ready', this.#onReady);
    this.#settled();
  }

  #sendPending(): void {
    if (this.#pendingCount === 0) return;
    clearTimeout(this.#pendingTimer);
    this.#pendingTimer = undefined;
    const pending = this.#pending;
    this.#pending = new Map();
    this.#pendingCount = 0;
    const sends: Promise<Outcome>[] = [];
    for (const [projectId, batch] of pending) sends.push(this.#send(projectId, batch, true));
    this.#lastSent = Promise.all(sends);
    this.#inflight--;
    this.#settled();
  }

  /**
   * One script call for one project's batch. `direct`: a first attempt, which on a retryable failure
   * goes to the buffer itself; the drain loop handles its own failures.
   */
  #send(projectId: string, batch: StateWrite[], direct: boolean): Promise<Outcome> {
    const id = this.#batchOf.get(batch[0] as StateWrite) ?? (++this.#batchSeq).toString(36);
    const acked = this.#acks.get(projectId);
    const acks = acked ? acked.splice(0, MAX_ACKS) : [];
    const { keys, args, bad } = batchCall(projectId, batch, { writer: this.#writer, id, acks });
    for (const b of bad) this.#drops.drop(b.s, `not serialisable: ${String(b.err)}`);
    const sent = bad.length ? batch.filter((s) => !bad.some((b) => b.s === s)) : batch;
    if (!sent.length) return Promise.resolve('dropped');
    this.#inflight++;
    return this.#writeScript(keys, args).then(
      ([logErr, usageErr, duplicate]) => {
        this.#inflight--;
        this.#acked(projectId, [id]);
        if (duplicate) for (const s of sent) countWrite(this.#metrics.deduplicated, s);
        // A part can fail alone (a key of the wrong type): count only what was lost.
        if (logErr || usageErr)
          for (const s of sent)
            this.#drops.drop(s, `refused by redis: ${logErr || usageErr}`, !!logErr, !!usageErr);
        this.#settled();
        return logErr || usageErr ? 'dropped' : 'ok';
      },
      (err: unknown) => {
        this.#inflight--;
        // Whether Redis applied the batch is unknown: its acknowledgements wait for the next one.
        this.#acked(projectId, acks);
        let outcome: Outcome = 'dropped';
        if (!isRetryable(err)) for (const s of sent) this.#drops.drop(s, `refused by redis: ${String(err)}`);
        else {
          for (const s of sent) this.#batchOf.set(s, id);
          if (direct) for (const s of sent) this.#enqueue(s, err);
          else outcome = 'retry';
        }
        this.#settled();
        return outcome;
      },
    );
  }

  #acked(projectId: string, ids: readonly string[]): void {
    if (!ids.length) return;
    const list = this.#acks.get(projectId);
    if (list) list.push(...ids);
    else this.#acks.set(projectId, [...ids]);
  }

  #enqueue(s: StateWrite, cause?: unknown): void {
    if (!this.#outage) {
      this.#outage = true;
      this.#logger.warn({
        msg: 'state: redis cannot take writes; buffering request logs and usage in memory',
        status: this.#client.status,
        err: cause === undefined ? undefined : String(cause),
        maxBuffered: this.#buffer.capacity,
      });
    }
    countWrite(this.#metrics.buffered, s);
    const evicted = this.#buffer.push(s);
    if (evicted) this.#drops.drop(evicted, 'write buffer full');
    this.#metrics.bufferSize.set(this.#buffer.size);
    // Straight away only while nothing has failed yet; after a failed round, new arrivals must not
    // cut the backoff short (a refusing Redis would otherwise be retried on every request).
    this.#drainSoon(this.#client.status === 'ready' && this.#failedRounds === 0 ? 0 : this.#backoff());
  }

  #backoff(): number {
    const ceiling = Math.min(this.#retryMaxMs, this.#retryBaseMs * 2 ** Math.min(this.#failedRounds, 20));
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }

  #drainSoon(delayMs: number): void {
    if (this.#draining) return;
    if (this.#timer) {
      if (delayMs > 0) return;
      clearTimeout(this.#timer);
    }
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#drain();
    }, delayMs);
    this.#timer.unref();
  }

  async #drain(): Promise<void> {
    if (this.#draining || this.#buffer.size === 0) return;
    if (this.#client.status !== 'ready') {
      this.#failedRounds++;
      this.#drainSoon(this.#backoff());
      return;
    }
    this.#draining = true;
    let written = 0;
    try {
      while (this.#buffer.size > 0) {
        const groups = this.#nextRound();
        const outcomes = await Promise.all(groups.map(([id, b]) => this.#send(id, b, false)));
        const again = groups.flatMap(([, b], i) => (outcomes[i] === 'retry' ? b : []));
        written += groups.reduce((n, [, b], i) => n + (outcomes[i] === 'ok' ? b.length : 0), 0);
        if (again.length > 0) {
          for (const s of this.#buffer.putBack(again)) this.#drops.drop(s, 'write buffer full');
          this.#failedRounds++;
          return;
        }
        this.#failedRounds = 0;
      }
      if (this.#outage) {
        this.#outage = false;
        this.#logger.info({ msg: 'state: redis takes writes again; buffer drained', written });
      }
    } finally {
      this.#draining = false;
      this.#metrics.bufferSize.set(this.#buffer.size);
      if (this.#buffer.size > 0) this.#drainSoon(this.#backoff());
      this.#settled();
    }
  }

  /** The next chunk of the buffer as [project, batch] groups: one script call each. */
  #nextRound(): [string, StateWrite[]][] {
    const chunk = this.#buffer.take(DRAIN_CHUNK);
    // A batch sent before goes out again whole, under its id: never split across two calls.
    const lastId = this.#batchOf.get(chunk[chunk.length - 1] as StateWrite);
    while (
      lastId !== undefined &&
      this.#buffer.size > 0 &&
      this.#batchOf.get(this.#buffer.peek() as StateWrite) === lastId
    )
      chunk.push(...this.#buffer.take(1));
    for (const s of chunk) countWrite(this.#metrics.retried, s);
    // One call per project and batch: those sent before keep their ids, the rest get new ones.
    const byBatch = new Map<string, StateWrite[]>();
    for (const s of chunk) {
      const key = `${this.#batchOf.get(s) ?? ''}\u0000${s.projectId}`;
      const b = byBatch.get(key);
      if (b) b.push(s);
      else byBatch.set(key, [s]);
    }
    return [...byBatch.values()].map((b): [string, StateWrite[]] => [(b[0] as StateWrite).projectId, b]);
  }

  #settled(): void {
    if (this.#idle.length === 0 || this.#inflight > 0 || this.#draining || this.#buffer.size > 0) return;
    const waiters = this.#idle;
    this.#idle = [];
    for (const w of waiters) w();
  }
}
