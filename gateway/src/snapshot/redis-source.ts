import type { Logger } from 'pino';
import { connectRedis, REDIS_KEYS, type RedisClient, type RedisConnection } from '#contract';
import type { SnapshotStore } from './store.ts';

/** Where the operator publishes: `url` for one Redis, `clusterNodes` (+ `url` for credentials) for a cluster. */
export interface RedisSourceOptions extends RedisConnection {
  /** Fallback poll of the `current` pointer; pub/sub can drop messages (reconnects, overload). */
  pollMs?: number;
  logger: Logger;
}

/**
 * Follows the published snapshot: loads `current` at start, reloads on change notices and on a
 * polling timer, and keeps serving the last good snapshot while Redis is away.
 */
export class RedisSnapshotSource {
  readonly #store: SnapshotStore;
  readonly #opts: { pollMs: number; logger: Logger };
  readonly #client: RedisClient;
  readonly #subscriber: RedisClient;
  #timer: NodeJS.Timeout | undefined;
  #loading: Promise<void> | undefined;
  #again = false;

  constructor(store: SnapshotStore, opts: RedisSourceOptions) {
    this.#store = store;
    this.#opts = { pollMs: opts.pollMs ?? 2000, logger: opts.logger };
    const conn: RedisConnection = {
      ...(opts.url ? { url: opts.url } : {}),
      ...(opts.clusterNodes ? { clusterNodes: opts.clusterNodes } : {}),
    };
    const common = {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      connectionName: 'switchyard-gateway',
    };
    this.#client = connectRedis(conn, common);
    // On a cluster, PUBLISH reaches every node, so the subscriber may sit on any of them.
    this.#subscriber = connectRedis(conn, {
      ...common,
      connectionName: 'switchyard-gateway-sub',
      maxRetriesPerRequest: null,
    });
    for (const c of [this.#client, this.#subscriber])
      c.on('error', (err: Error) =>
        this.#opts.logger.warn({
          msg: 'redis connection problem; serving the last good snapshot',
          err: err.message,
        }),
      );
  }

  /** Connects and tries a first load; never throws for Redis being down (readiness reports it instead). */
  async start(): Promise<void> {
    await Promise.allSettled([this.#client.connect(), this.#subscriber.connect()]);
    this.#subscriber.on('message', (_channel: string, version: string) => {
      if (version !== this.#store.current?.version) this.refresh();
    });
    // Resubscribe after a reconnect happens automatically in ioredis; a reload covers missed notices.
    this.#subscriber.on('ready', () => this.refresh());
    await this.#subscriber.subscribe(REDIS_KEYS.changed).catch(() => undefined);
    await this.refresh();
    this.#timer = setInterval(() => this.refresh(), this.#opts.pollMs);
    this.#timer.unref();
  }

  /** Loads the current snapshot if it differs; concurrent calls coalesce into at most one extra load. */
  refresh(): Promise<void> {
    if (this.#loading) {
      this.#again = true;
      return this.#loading;
    }
    this.#loading = this.#load()
      .catch((err: unknown) =>
        this.#opts.logger.warn({
          msg: 'snapshot reload failed; keeping the last good one',
          err: (err as Error).message,
        }),
      )
      .finally(() => {
        this.#loading = undefined;
        if (this.#again) {
          this.#again = false;
          void this.refresh();
        }
      });
    return this.#loading;
  }

  async #load(): Promise<void> {
    if (this.#client.status !== 'ready') return;
    const version = await this.#client.get(REDIS_KEYS.current);
    if (!version || version === this.#store.current?.version) return;
    const json = await this.#client.get(REDIS_KEYS.snapshot(version));
    if (!json) throw new Error(`snapshot ${version} is announced but missing`);
    this.#store.install(JSON.parse(json));
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#client.disconnect();
    this.#subscriber.disconnect();
  }
}
