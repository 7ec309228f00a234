import type { Logger } from 'pino';
import type { StateClient } from '../state/connect.ts';
import type { ResultBody } from './channels.ts';
import { dedicatedConnection } from './connections.ts';
import { ASYNC_KEYS } from './keys.ts';

export interface ResultMessage {
  projectId: string;
  channelId: string;
  result: ResultBody;
}

export type ResultListener = (m: ResultMessage) => void;

/**
 * Finished results fan out to whichever pod holds the client's socket. Every pod listens on one
 * channel (not one per socket): no subscribe/publish race at join time, and a join checks the stored
 * result after it is listening, so nothing is missed in between.
 */
export interface ResultBus {
  publish(m: ResultMessage): Promise<void>;
  listen(l: ResultListener): void;
  close(): Promise<void>;
}

export class MemoryResultBus implements ResultBus {
  readonly #listeners = new Set<ResultListener>();
  async publish(m: ResultMessage): Promise<void> {
    for (const l of this.#listeners) l(m);
  }
  listen(l: ResultListener): void {
    this.#listeners.add(l);
  }
  async close(): Promise<void> {
    this.#listeners.clear();
  }
}

export class RedisResultBus implements ResultBus {
  readonly #pub: StateClient;
  readonly #sub: StateClient;
  readonly #listeners = new Set<ResultListener>();

  constructor(redis: StateClient, logger: Logger) {
    this.#pub = redis;
    // A subscribed connection can do nothing else: its own, with an offline queue so the
    // SUBSCRIBE issued before the connection is up is sent once it is (and again after reconnects).
    this.#sub = dedicatedConnection(redis, 'switchyard-results');
    this.#sub.on('error', (err: Error) =>
      logger.warn({ msg: 'async: result bus problem', err: err.message }),
    );
    this.#sub.on('message', (_channel: string, raw: string) => {
      let m: ResultMessage;
      try {
        m = JSON.parse(raw) as ResultMessage;
      } catch {
        return;
      }
      for (const l of this.#listeners) l(m);
    });
    void this.#sub
      .subscribe(ASYNC_KEYS.results)
      .catch((err: Error) => logger.error({ msg: 'async: cannot subscribe to results', err: err.message }));
  }

  async publish(m: ResultMessage): Promise<void> {
    await this.#pub.publish(ASYNC_KEYS.results, JSON.stringify(m));
  }

  listen(l: ResultListener): void {
    this.#listeners.add(l);
  }

  async close(): Promise<void> {
    this.#listeners.clear();
    this.#sub.disconnect();
  }
}
