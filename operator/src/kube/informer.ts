import type { Logger } from 'pino';
import { type KubeClient, KubeError, type KubeList, type KubeObject, type WatchEvent } from './client.ts';

/**
 * List + watch with a local cache, like client-go's reflector:
 * - lists (paged) and then watches from the list's resourceVersion, with bookmarks;
 * - the server ends a watch every few minutes (timeoutSeconds): it is resumed from the last seen RV;
 * - `410 Gone` (as an HTTP answer or an ERROR event) means the RV is too old: relist, diff the cache;
 * - other errors restart the loop with exponential backoff (capped);
 * - every `resyncMs` the handler gets a resync call, so level-based reconcilers recheck everything.
 * Handlers receive the old and new object; they decide what counts as a change.
 */

export type InformerEvent = 'add' | 'update' | 'delete' | 'resync';
export type InformerHandler = (event: InformerEvent, obj: KubeObject | undefined, old?: KubeObject) => void;

export interface InformerOptions {
  client: KubeClient;
  /** Collection path, e.g. /apis/switchyard.dev/v1alpha1/workflows or /api/v1/namespaces/x/secrets. */
  path: string;
  name: string;
  logger: Logger;
  resyncMs?: number;
  handler: InformerHandler;
  /** Page size of the list. */
  pageSize?: number;
  onError?: (err: unknown) => void;
}

const keyOf = (o: KubeObject): string => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;

export class Informer {
  readonly #opts: Required<Omit<InformerOptions, 'onError'>> & Pick<InformerOptions, 'onError'>;
  readonly #cache = new Map<string, KubeObject>();
  #rv = '';
  #synced = false;
  #stopped = true;
  #abort: AbortController | undefined;
  #loop: Promise<void> | undefined;
  #resyncTimer: NodeJS.Timeout | undefined;
  #syncWaiters: (() => void)[] = [];
  #forcedRv: string | undefined;
  /** How many full lists ran (the first one included); tests read it to see a 410 relist. */
  lists = 0;

  constructor(opts: InformerOptions) {
    this.#opts = { resyncMs: 5 * 60_000, pageSize: 500, ...opts };
  }

  get synced(): boolean {
    return this.#synced;
  }

  get resourceVersion(): string {
    return this.#rv;
  }

  list(): KubeObject[] {
    return [...this.#cache.values()];
  }

  get(namespace: string, name: string): KubeObject | undefined {
    return this.#cache.get(`${namespace}/${name}`);
  }

  /** Puts a newer copy (e.g. the answer of our own write) into the cache without an event. */
  upsertLocal(obj: KubeObject): void {
    const current = this.#cache.get(keyOf(obj));
    if (current && Number(current.metadata.resourceVersion) > Number(obj.metadata.resourceVersion)) return;
    this.#cache.set(keyOf(obj), obj);
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#loop = this.#run();
    this.#resyncTimer = setInterval(() => {
      if (this.#synced) this.#opts.handler('resync', undefined);
    }, this.#opts.resyncMs);
    this.#resyncTimer.unref();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#resyncTimer);
    this.#abort?.abort();
    await this.#loop;
  }

  waitForSync(): Promise<void> {
    if (this.#synced) return Promise.resolve();
    return new Promise((r) => this.#syncWaiters.push(r));
  }

  /**
   * Ends the current watch and resumes it from `resourceVersion` (a test hook: an old RV makes the
   * server answer 410 Gone, which must lead to a relist that misses nothing).
   */
  restartWatchFrom(resourceVersion: string): void {
    this.#forcedRv = resourceVersion;
    this.#abort?.abort();
  }

  async #run(): Promise<void> {
    let failures = 0;
    let needList = true;
    while (!this.#stopped) {
      this.#abort = new AbortController();
      try {
        if (needList) {
          await this.#relist(this.#abort.signal);
          needList = false;
        }
        if (this.#forcedRv !== undefined) {
          this.#rv = this.#forcedRv;
          this.#forcedRv = undefined;
        }
        await this.#watch(this.#abort.signal);
        failures = 0;
      } catch (err) {
        if (this.#stopped) break;
        if (this.#abort.signal.aborted && this.#forcedRv !== undefined) continue;
        if (err instanceof KubeError && err.status === 410) {
          this.#opts.logger.info({
            msg: 'watch resourceVersion too old (410 Gone): relisting',
            informer: this.#opts.name,
          });
          needList = true;
          continue;
        }
        failures++;
        needList = failures > 2 || needList;
        const delay = Math.min(30_000, 250 * 2 ** Math.min(failures, 7)) * (0.8 + Math.random() * 0.4);
        this.#opts.logger.warn({
          msg: 'watch failed; retrying',
          informer: this.#opts.name,
          err: (err as Error).message,
          retryInMs: Math.round(delay),
        });
        this.#opts.onError?.(err);
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }

  async #relist(signal: AbortSignal): Promise<void> {
    const fresh = new Map<string, KubeObject>();
    let cont: string | undefined;
    let rv = '';
    do {
      const page: KubeList = await this.#opts.client.request('GET', this.#opts.path, {
        query: { limit: this.#opts.pageSize, continue: cont },
        signal,
      });
      for (const item of page.items) fresh.set(keyOf(item), item);
      cont = page.metadata.continue || undefined;
      rv = page.metadata.resourceVersion ?? rv;
    } while (cont);
    this.lists++;
    const old = new Map(this.#cache);
    this.#cache.clear();
    for (const [k, o] of fresh) this.#cache.set(k, o);
    this.#rv = rv;
    for (const [k, o] of fresh) {
      const prev = old.get(k);
      if (!prev) this.#opts.handler('add', o);
      else if (prev.metadata.resourceVersion !== o.metadata.resourceVersion)
        this.#opts.handler('update', o, prev);
    }
    for (const [k, o] of old) if (!fresh.has(k)) this.#opts.handler('delete', o);
    if (!this.#synced) {
      this.#synced = true;
      for (const w of this.#syncWaiters.splice(0)) w();
    }
  }

  async #watch(signal: AbortSignal): Promise<void> {
    let gone: KubeError | undefined;
    await this.#opts.client.watch(
      this.#opts.path,
      {
        resourceVersion: this.#rv,
        allowWatchBookmarks: true,
        timeoutSeconds: 240 + Math.floor(Math.random() * 60),
      },
      (e: WatchEvent) => {
        if (gone) return;
        if (e.type === 'ERROR') {
          const code = e.object.code ?? 500;
          gone = new KubeError(code, e.object.reason ?? 'Error', e.object.message ?? 'watch error');
          this.#abort?.abort();
          return;
        }
        const rv = e.object.metadata?.resourceVersion;
        if (rv) this.#rv = rv;
        if (e.type === 'BOOKMARK') return;
        const key = keyOf(e.object);
        const prev = this.#cache.get(key);
        if (e.type === 'DELETED') {
          this.#cache.delete(key);
          this.#opts.handler('delete', e.object);
        } else {
          this.#cache.set(key, e.object);
          this.#opts.handler(prev ? 'update' : 'add', e.object, prev);
        }
      },
      signal,
    );
    if (gone) throw gone;
  }
}
