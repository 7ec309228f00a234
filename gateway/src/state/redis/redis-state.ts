import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { StateClient } from '../connect.ts';
import { stateWriteMetrics } from '../metrics.ts';
import {
  type LogPage,
  type LogQuery,
  type RuntimeState,
  StateUnavailableError,
  type StateWrite,
  type UsageQuery,
  type UsageRow,
} from '../types.ts';
import { BatchWriter } from './batch-writer.ts';
import { readLogs, readUsage } from './redis-reads.ts';

export interface RedisStateOptions {
  client: StateClient;
  /** See RuntimeState.answerRedis; `client` when omitted. */
  answerClient?: StateClient;
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
  /** close() also disconnects the clients (when the state built them). */
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

/**
 * The default flush window. At low concurrency a batch per turn is a batch per request: one script
 * call, a write and a read syscall each, ~90 µs of CPU at concurrency 1 on the bench machine. Five
 * milliseconds groups them while staying far below what a client could notice in the request log.
 */
export const DEFAULT_FLUSH_MS = 5;

/**
 * Runtime state in Redis or Redis Cluster: writes go through a BatchWriter (flush window, outage
 * buffer, exactly-once batches), reads straight to Redis after this pod's own open window.
 */
export class RedisRuntimeState implements RuntimeState {
  readonly backend = 'redis' as const;
  readonly #client: StateClient;
  get redis(): StateClient {
    return this.#client;
  }
  readonly #answerClient: StateClient | undefined;
  get answerRedis(): StateClient {
    return this.#answerClient ?? this.#client;
  }
  readonly #logger: Logger;
  readonly #writes: BatchWriter;
  readonly #scanLimit: number;
  readonly #closeTimeoutMs: number;
  readonly #ownsClient: boolean;
  #closed = false;

  constructor(opts: RedisStateOptions) {
    this.#client = opts.client;
    this.#answerClient = opts.answerClient;
    this.#logger = opts.logger;
    this.#scanLimit = opts.scanLimit ?? 1000;
    this.#closeTimeoutMs = opts.closeTimeoutMs ?? 5000;
    this.#ownsClient = opts.ownsClient ?? false;
    this.#writes = new BatchWriter({
      client: opts.client,
      logger: opts.logger,
      metrics: stateWriteMetrics(opts.registry),
      writer: opts.writer ?? randomBytes(8).toString('hex'),
      maxBuffered: opts.maxBuffered ?? 10_000,
      retryBaseMs: opts.retryBaseMs ?? 100,
      retryMaxMs: opts.retryMaxMs ?? 5000,
      flushMs: opts.flushMs ?? DEFAULT_FLUSH_MS,
      now: opts.now ?? Date.now,
    });
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
    this.#writes.write(s);
  }

  /**
   * Sends the open window now and resolves once nothing is in flight or buffered (written, or
   * dropped and counted).
   */
  flush(): Promise<void> {
    return this.#writes.flush();
  }

  async close(timeoutMs = this.#closeTimeoutMs): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#writes.close(Math.min(timeoutMs, this.#closeTimeoutMs));
    if (!this.#ownsClient) return;
    const quit = (c: StateClient) =>
      c.quit().then(
        () => undefined,
        () => c.disconnect(),
      );
    await Promise.all([quit(this.#client), ...(this.#answerClient ? [quit(this.#answerClient)] : [])]);
  }

  /** A read sees this pod's own settlements: the open window goes out first and the read waits for it. */
  async queryLogs(projectId: string, q: LogQuery): Promise<LogPage> {
    await this.#writes.ownWrites();
    return readLogs(this.#client, projectId, q, { scanLimit: this.#scanLimit, logger: this.#logger });
  }

  async queryUsage(projectId: string, q: UsageQuery): Promise<UsageRow[]> {
    await this.#writes.ownWrites();
    return readUsage(this.#client, projectId, q);
  }
}
