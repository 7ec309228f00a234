/**
 * A credential that expires (temporary AWS keys, an OAuth access token), fetched on first use and
 * fetched again once less than `refreshAheadMs` of its life is left, so a request never carries one
 * that runs out on its way. Concurrent callers share one fetch. If a renewal fails while the current
 * credential is still valid, the current one keeps serving and the next call tries again.
 */

export interface Expiring<T> {
  value: T;
  /** Epoch ms; Infinity for a credential that does not expire. */
  expiresAt: number;
}

export interface RefreshingOptions {
  /** Renew this long before expiry. Default 5 minutes (what the AWS SDKs and google-auth do). */
  refreshAheadMs?: number;
  /** Injected in tests; Date.now otherwise. */
  now?: () => number;
}

export const DEFAULT_REFRESH_AHEAD_MS = 5 * 60_000;

export class Refreshing<T> {
  #current: Expiring<T> | undefined;
  #inflight: Promise<Expiring<T>> | undefined;
  readonly #fetch: () => Promise<Expiring<T>>;
  readonly #ahead: number;
  readonly #now: () => number;
  /** How many fetches were made (observability and tests). */
  fetches = 0;

  constructor(fetch: () => Promise<Expiring<T>>, opts: RefreshingOptions = {}) {
    this.#fetch = fetch;
    this.#ahead = opts.refreshAheadMs ?? DEFAULT_REFRESH_AHEAD_MS;
    this.#now = opts.now ?? Date.now;
  }

  /** The credential, renewed first when it is due; waits for the caller's signal at most. */
  async get(signal?: AbortSignal): Promise<T> {
    const now = this.#now();
    const cur = this.#current;
    if (cur && now < cur.expiresAt - this.#ahead) return cur.value;
    const renewal = this.#renew();
    if (cur && now < cur.expiresAt) {
      // Due but still valid: serve it, and let the renewal (or its failure) land in the background.
      renewal.catch(() => undefined);
      return cur.value;
    }
    return (await (signal ? abortable(renewal, signal) : renewal)).value;
  }

  /** Resolves once no renewal is under way (a background renewal included); never rejects. */
  async settled(): Promise<void> {
    await this.#inflight?.catch(() => undefined);
  }

  /** Forgets the credential (e.g. the provider refused it), so the next get() fetches anew. */
  invalidate(): void {
    this.#current = undefined;
  }

  #renew(): Promise<Expiring<T>> {
    if (this.#inflight) return this.#inflight;
    this.fetches++;
    const p = this.#fetch().then(
      (fresh) => {
        this.#current = fresh;
        this.#inflight = undefined;
        return fresh;
      },
      (err: unknown) => {
        this.#inflight = undefined;
        throw err;
      },
    );
    this.#inflight = p;
    return p;
  }
}

/** The shared fetch is not the caller's to cancel: a caller that gives up only stops waiting. */
function abortable<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
