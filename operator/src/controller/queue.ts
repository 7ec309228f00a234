/**
 * A de-duplicating, delaying work queue with one worker: a key is either waiting (once, at its
 * earliest due time) or being processed; a key added while it is processed runs again afterwards.
 * Failures are retried with per-key exponential backoff.
 */

export type QueueHandler = (key: string) => Promise<void>;

export class WorkQueue {
  readonly #due = new Map<string, number>();
  readonly #failures = new Map<string, number>();
  #processing: string | undefined;
  #timer: NodeJS.Timeout | undefined;
  #running = false;
  #handler: QueueHandler | undefined;
  #idle: Promise<void> = Promise.resolve();
  readonly #onDepth: (depth: number) => void;

  constructor(onDepth: (depth: number) => void = () => {}) {
    this.#onDepth = onDepth;
  }

  get depth(): number {
    return this.#due.size;
  }

  /** Whether `key` is waiting and due now (lets long work yield to more urgent keys). */
  isDue(key: string): boolean {
    const at = this.#due.get(key);
    return at !== undefined && at <= Date.now();
  }

  /** Adds `key` to run after `delayMs`; an earlier pending due time wins. */
  add(key: string, delayMs = 0): void {
    const at = Date.now() + Math.max(0, delayMs);
    const existing = this.#due.get(key);
    if (existing !== undefined && existing <= at) return;
    this.#due.set(key, at);
    this.#onDepth(this.#due.size);
    this.#schedule();
  }

  start(handler: QueueHandler): void {
    this.#handler = handler;
    this.#running = true;
    this.#schedule();
  }

  /** Stops taking new work; resolves once the key in progress (if any) is done. Pending keys stay. */
  async stop(): Promise<void> {
    this.#running = false;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#idle;
  }

  clear(): void {
    this.#due.clear();
    this.#failures.clear();
    this.#onDepth(0);
  }

  #schedule(): void {
    if (!this.#running || this.#processing !== undefined) return;
    clearTimeout(this.#timer);
    let next: number | undefined;
    for (const at of this.#due.values()) if (next === undefined || at < next) next = at;
    if (next === undefined) return;
    this.#timer = setTimeout(() => this.#tick(), Math.max(0, next - Date.now()));
  }

  #tick(): void {
    this.#timer = undefined;
    if (!this.#running || this.#processing !== undefined) return;
    const now = Date.now();
    let key: string | undefined;
    let best = Number.POSITIVE_INFINITY;
    for (const [k, at] of this.#due) if (at <= now && at < best) [key, best] = [k, at];
    if (key === undefined) {
      this.#schedule();
      return;
    }
    this.#due.delete(key);
    this.#onDepth(this.#due.size);
    this.#processing = key;
    const handler = this.#handler;
    const k = key;
    this.#idle = (async () => {
      try {
        await handler?.(k);
        this.#failures.delete(k);
      } catch {
        const n = (this.#failures.get(k) ?? 0) + 1;
        this.#failures.set(k, n);
        this.add(k, Math.min(60_000, 100 * 2 ** Math.min(n, 10)));
      } finally {
        this.#processing = undefined;
        this.#schedule();
      }
    })();
  }
}
