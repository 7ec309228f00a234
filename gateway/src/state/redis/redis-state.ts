import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Counter, Registry } from 'prom-client';
import type { StateClient } from '../connect.ts';
import { logEntryJson } from '../entry-json.ts';
import { APPLIED_TTL_SEC, LOG_FIELD, STATE_KEYS, USAGE_TTL_SEC } from '../keys.ts';
import { type LogRow, pageLogs } from '../log-pager.ts';
import { type StateWriteMetrics, stateWriteMetrics } from '../metrics.ts';
import {
  type LogPage,
  type LogQuery,
  type RuntimeState,
  StateUnavailableError,
  type StateWrite,
  type UsageQuery,
  type UsageRow,
} from '../types.ts';
import { foldUsage, forEachUsageField, usageHours } from '../usage-fields.ts';
import { BoundedQueue } from './bounded-queue.ts';
import { isRetryable } from './errors.ts';
import { defineWrite } from './write-script.ts';

export interface RedisStateOptions {
  client: StateClient;
  registry: Registry;
  logger: Logger;
  /** Settlements kept in memory while Redis is away; beyond it the oldest are dropped (and counted). */
  maxBuffered?: number;
  /** Backoff between retries of the buffer: base doubles per failed round up to max (with jitter). */
  retryBaseMs?: number;
  retryMaxMs?: number;
  /** Rows a log page examines at most (see log-pager.ts). */
  scanLimit?: number;
  /** How long close() waits for buffered settlements before dropping them. */
  closeTimeoutMs?: number;
  /** close() also disconnects the client (when the state built it). */
  ownsClient?: boolean;
  /**
   * How long a settlement waits for others before its project's batch goes out (0: at the end of
   * the event-loop turn). Bounds what a SIGKILL can lose besides the requests in flight.
   */
  flushMs?: number;
  /** This writer's name in the applied-batches hash (write-script.ts); default: random per instance. */
  writer?: string;
  now?: () => number;
}

/** Writes re-sent per round while draining the buffer (one script call per project among them). */
const DRAIN_CHUNK = 256;
/**
 * The default flush window. At low concurrency a batch per turn is a batch per request: one script
 * call, a write and a read syscall each, ~90 µs of CPU at concurrency 1 on the bench machine. Five
 * milliseconds groups them while staying far below what a client could notice in the request log.
 */
export const DEFAULT_FLUSH_MS = 5;
/** A window's batch goes out at once when it reaches this many settlements. */
const FLUSH_AT = DRAIN_CHUNK;
/**
 * Stream ids are Redis's clock at insertion, entry times the gateway's at completion; an entry is
 * never inserted before it finished, so ids older than `from` minus this skew allowance cannot hold
 * an entry from `from` on, and a time-bounded page stops there instead of scanning further back.
 */
const CLOCK_SKEW_MS = 10 * 60_000;
/** A dropped-write log line at most this often; the counter has the exact figures. */
const DROP_LOG_EVERY_MS = 10_000;

const STREAM_ID = /^[0-9]{1,20}-[0-9]{1,20}$/;

type Outcome = 'ok' | 'retry' | 'dropped';

/** Adds a usage field's increment to a batch's hour (a plain function: no closure per write). */
function addField(fields: Map<string, number>, field: string, by: number): void {
  fields.set(field, (fields.get(field) ?? 0) + by);
}

/** What makes one batch exactly once: its writer, its id, and the ids whose replies the writer saw. */
interface BatchIdentity {
  writer: string;
  id: string;
  acks: readonly string[];
}

/** One project's writes as one script call's keys and arguments; the unserialisable ones apart. */
function batchArgs(
  projectId: string,
  batch: readonly StateWrite[],
  identity: BatchIdentity,
): { keys: string[]; args: Array<string | number>; bad: { s: StateWrite; err: unknown }[] } {
  const entries: string[] = [];
  const hours = new Map<string, Map<string, number>>();
  const bad: { s: StateWrite; err: unknown }[] = [];
  let logCap = 1;
  for (const s of batch) {
    if (s.log) {
      try {
        entries.push(logEntryJson(s.log));
      } catch (err) {
        // Not expected (logEntryJson stores what it cannot serialise without it): no retry will help.
        bad.push({ s, err });
        continue;
      }
      logCap = Math.max(logCap, s.logCap);
    }
    if (s.usage) {
      const key = STATE_KEYS.usage(projectId, s.usage.hourStartSec);
      let fields = hours.get(key);
      if (!fields) {
        fields = new Map();
        hours.set(key, fields);
      }
      forEachUsageField(s.usage, addField, fields);
    }
  }
  const keys = [STATE_KEYS.logs(projectId), STATE_KEYS.applied(projectId, identity.writer), ...hours.keys()];
  const args: Array<string | number> = [
    logCap,
    entries.length,
    identity.id,
    APPLIED_TTL_SEC,
    identity.acks.length,
    ...identity.acks,
    ...entries,
  ];
  for (const fields of hours.values()) {
    args.push(USAGE_TTL_SEC, fields.size);
    for (const [f, by] of fields) args.push(f, by);
  }
  return { keys, args, bad };
}

/** Acknowledged batch ids sent with one batch at most (the rest go with the next). */
const MAX_ACKS = 256;

/**
 * Runtime state in Redis or Redis Cluster. A project's writes of one flush window (`flushMs`) are
 * one script call (write-script.ts: one round trip, applied whole or not at all); while Redis cannot
 * take them, they wait in a bounded buffer that drains as soon as the client is ready again. A batch
 * keeps its id when it is sent again, so one whose first reply was lost is not written twice.
 */
export class RedisRuntimeState implements RuntimeState {
  readonly backend = 'redis' as const;
  readonly #client: StateClient;
  get redis(): StateClient {
    return this.#client;
  }
  readonly #logger: Logger;
  readonly #metrics: StateWriteMetrics;
  readonly #buffer: BoundedQueue<StateWrite>;
  readonly #retryBaseMs: number;
  readonly #retryMaxMs: number;
  readonly #scanLimit: number;
  readonly #closeTimeoutMs: number;
  readonly #ownsClient: boolean;
  readonly #now: () => number;
  readonly #onReady = () => {
    this.#failedRounds = 0;
    if (this.#buffer.size > 0) this.#drainSoon(0);
  };
  readonly #writeScript: ReturnType<typeof defineWrite>;
  /** This window's writes, by project: one script call each when the window closes. */
  #pending = new Map<string, StateWrite[]>();
  #pendingCount = 0;
  #pendingTimer: NodeJS.Timeout | undefined;
  /** The sends of the last window, so a read can wait for this pod's own writes. */
  #lastSent: Promise<unknown> = Promise.resolve();
  readonly #flushMs: number;
  readonly #sendPendingNow = () => this.#sendPending();
  #inflight = 0;
  #draining = false;
  #timer: NodeJS.Timeout | undefined;
  #failedRounds = 0;
  #closed = false;
  #idle: (() => void)[] = [];
  #outage = false;
  #dropsUnlogged = 0;
  #lastDropLog = -Infinity;
  readonly #writer: string;
  #batchSeq = 0;
  /** The batch id of settlements sent once and buffered again: they go out again under it. */
  readonly #batchOf = new WeakMap<StateWrite, string>();
  /** Per project, ids of batches whose reply was seen: the next batch lets Redis forget them. */
  readonly #acks = new Map<string, string[]>();

  constructor(opts: RedisStateOptions) {
    this.#client = opts.client;
    this.#logger = opts.logger;
    this.#metrics = stateWriteMetrics(opts.registry);
    this.#buffer = new BoundedQueue(opts.maxBuffered ?? 10_000);
    this.#retryBaseMs = opts.retryBaseMs ?? 100;
    this.#retryMaxMs = opts.retryMaxMs ?? 5000;
    this.#scanLimit = opts.scanLimit ?? 1000;
    this.#closeTimeoutMs = opts.closeTimeoutMs ?? 5000;
    this.#ownsClient = opts.ownsClient ?? false;
    this.#now = opts.now ?? Date.now;
    this.#flushMs = opts.flushMs ?? DEFAULT_FLUSH_MS;
    this.#writer = opts.writer ?? randomBytes(8).toString('hex');
    this.#writeScript = defineWrite(this.#client);
    this.#client.on('ready', this.#onReady);
  }

  /** Resolves when the client is connected (or rejects after `timeoutMs`); settle never needs it. */
  whenReady(timeoutMs = 10_000): Promise<void> {
    if (this.#client.status === 'ready') return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#client.off('ready', ready);
        reject(new StateUnavailableError(`redis not ready after ${timeoutMs} ms (${this.#client.status})`));
      }, timeoutMs);
      const ready = () => {
        clearTimeout(timer);
        resolve();
      };
      this.#client.once('ready', ready);
    });
  }

  write(s: StateWrite): void {
    if (this.#closed) {
      this.#drop(s, 'state layer closed');
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

  /** A read sees this pod's own settlements: the open window goes out first and the read waits for it. */
  async #ownWrites(): Promise<void> {
    this.#sendPending();
    await this.#lastSent;
  }

  /**
   * One script call for the settlement. `direct`: a first attempt, which on a retryable failure goes
   * to the buffer itself; the drain loop handles its own failures.
   */
  #send(projectId: string, batch: StateWrite[], direct: boolean): Promise<Outcome> {
    const id = this.#batchOf.get(batch[0] as StateWrite) ?? (++this.#batchSeq).toString(36);
    const acked = this.#acks.get(projectId);
    const acks = acked ? acked.splice(0, MAX_ACKS) : [];
    const { keys, args, bad } = batchArgs(projectId, batch, { writer: this.#writer, id, acks });
    for (const b of bad) this.#drop(b.s, `not serialisable: ${String(b.err)}`);
    const sent = bad.length ? batch.filter((s) => !bad.some((b) => b.s === s)) : batch;
    if (!sent.length) return Promise.resolve('dropped');
    this.#inflight++;
    return this.#writeScript(keys, args).then(
      ([logErr, usageErr, duplicate]) => {
        this.#inflight--;
        this.#acked(projectId, [id]);
        if (duplicate) for (const s of sent) this.#count(this.#metrics.deduplicated, s);
        // A part can fail alone (a key of the wrong type): count only what was lost.
        if (logErr || usageErr)
          for (const s of sent)
            this.#drop(s, `refused by redis: ${logErr || usageErr}`, !!logErr, !!usageErr);
        this.#settled();
        return logErr || usageErr ? 'dropped' : 'ok';
      },
      (err: unknown) => {
        this.#inflight--;
        // Whether Redis applied the batch is unknown: its acknowledgements wait for the next one.
        this.#acked(projectId, acks);
        let outcome: Outcome = 'dropped';
        if (!isRetryable(err)) for (const s of sent) this.#drop(s, `refused by redis: ${String(err)}`);
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
    this.#count(this.#metrics.buffered, s);
    const evicted = this.#buffer.push(s);
    if (evicted) this.#drop(evicted, 'write buffer full');
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
        const chunk = this.#buffer.take(DRAIN_CHUNK);
        // A batch sent before goes out again whole, under its id: never split across two calls.
        const lastId = this.#batchOf.get(chunk[chunk.length - 1] as StateWrite);
        while (
          lastId !== undefined &&
          this.#buffer.size > 0 &&
          this.#batchOf.get(this.#buffer.peek() as StateWrite) === lastId
        )
          chunk.push(...this.#buffer.take(1));
        for (const s of chunk) this.#count(this.#metrics.retried, s);
        // One call per project and batch: those sent before keep their ids, the rest get new ones.
        const byBatch = new Map<string, StateWrite[]>();
        for (const s of chunk) {
          const key = `${this.#batchOf.get(s) ?? ''}\u0000${s.projectId}`;
          const b = byBatch.get(key);
          if (b) b.push(s);
          else byBatch.set(key, [s]);
        }
        const groups = [...byBatch.values()].map((b): [string, StateWrite[]] => [
          (b[0] as StateWrite).projectId,
          b,
        ]);
        const outcomes = await Promise.all(groups.map(([id, b]) => this.#send(id, b, false)));
        const again = groups.flatMap(([, b], i) => (outcomes[i] === 'retry' ? b : []));
        written += groups.reduce((n, [, b], i) => n + (outcomes[i] === 'ok' ? b.length : 0), 0);
        if (again.length > 0) {
          for (const s of this.#buffer.putBack(again)) this.#drop(s, 'write buffer full');
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

  #count(counter: Counter<'kind'>, s: StateWrite): void {
    if (s.log) counter.inc({ kind: 'log' });
    if (s.usage) counter.inc({ kind: 'usage' });
  }

  #drop(s: StateWrite, reason: string, log = s.log !== undefined, usage = s.usage !== undefined): void {
    if (log) this.#metrics.dropped.inc({ kind: 'log' });
    if (usage) this.#metrics.dropped.inc({ kind: 'usage' });
    this.#dropsUnlogged++;
    const now = this.#now();
    if (now - this.#lastDropLog >= DROP_LOG_EVERY_MS) {
      this.#logger.error({
        msg: 'state: dropped request-log entries and usage (see switchyard_state_writes_dropped_total)',
        reason,
        dropped: this.#dropsUnlogged,
        project: s.projectId,
      });
      this.#dropsUnlogged = 0;
      this.#lastDropLog = now;
    }
  }

  #settled(): void {
    if (this.#idle.length === 0 || this.#inflight > 0 || this.#draining || this.#buffer.size > 0) return;
    const waiters = this.#idle;
    this.#idle = [];
    for (const w of waiters) w();
  }

  /**
   * Sends the open window now and resolves once nothing is in flight or buffered (written, or
   * dropped and counted).
   */
  flush(): Promise<void> {
    this.#sendPending();
    if (this.#inflight === 0 && !this.#draining && this.#buffer.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  async close(timeoutMs = this.#closeTimeoutMs): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    let timer: NodeJS.Timeout | undefined;
    const waitMs = Math.min(timeoutMs, this.#closeTimeoutMs);
    await Promise.race([this.flush(), new Promise((r) => (timer = setTimeout(r, waitMs)))]);
    clearTimeout(timer);
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const unflushed = this.#buffer.size + this.#inflight;
    for (const s of this.#buffer.take(this.#buffer.size)) this.#drop(s, 'shut down with redis unreachable');
    if (unflushed > 0)
      this.#logger.error({
        msg: 'state: shut down before these request-log entries and usage increments were written',
        unflushed_settlements: unflushed,
        redis: this.#client.status,
      });
    this.#metrics.bufferSize.set(0);
    if (this.#dropsUnlogged > 0) {
      this.#lastDropLog = -Infinity;
      this.#logger.error({
        msg: 'state: dropped writes since the last report',
        dropped: this.#dropsUnlogged,
      });
      this.#dropsUnlogged = 0;
    }
    this.#client.off('ready', this.#onReady);
    this.#settled();
    if (this.#ownsClient) await this.#client.quit().catch(() => this.#client.disconnect());
  }

  async #read<T>(what: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      throw new StateUnavailableError(`runtime state unavailable (${what}): ${String(err)}`, { cause: err });
    }
  }

  async queryLogs(projectId: string, q: LogQuery): Promise<LogPage> {
    await this.#ownWrites();
    const key = STATE_KEYS.logs(projectId);
    const oldest = q.from === undefined ? '-' : String(Math.max(0, Math.floor(q.from) - CLOCK_SKEW_MS));
    const fetch = async (before: string | null, count: number): Promise<LogRow[]> => {
      const reply = await this.#read('request logs', () =>
        this.#client.xrevrange(key, before === null ? '+' : `(${before}`, oldest, 'COUNT', count),
      );
      return reply.map(([id, fields]): LogRow => {
        const at = fields.indexOf(LOG_FIELD);
        return [id, at >= 0 && at % 2 === 0 ? (fields[at + 1] ?? '') : ''];
      });
    };
    return pageLogs(fetch, q, {
      backend: 'r',
      projectId,
      isId: (id) => STREAM_ID.test(id),
      scanLimit: this.#scanLimit,
      onInvalid: (id, problem) =>
        this.#logger.warn({ msg: 'state: skipped an invalid log entry', projectId, id, problem }),
    });
  }

  async queryUsage(projectId: string, q: UsageQuery): Promise<UsageRow[]> {
    await this.#ownWrites();
    const hours = usageHours(q);
    const results = await this.#read('usage', () => {
      const p = this.#client.pipeline();
      for (const h of hours) p.hgetall(STATE_KEYS.usage(projectId, h));
      return p.exec();
    });
    const found: [number, [string, string][]][] = [];
    for (const [i, h] of hours.entries()) {
      const [err, fields] = results?.[i] ?? [new Error('no reply'), null];
      if (err)
        throw new StateUnavailableError(`runtime state unavailable (usage): ${String(err)}`, { cause: err });
      if (fields && typeof fields === 'object') {
        const entries = Object.entries(fields as Record<string, string>);
        if (entries.length > 0) found.push([h, entries]);
      }
    }
    return foldUsage(found, q);
  }
}
