import type { Logger } from 'pino';
import {
  type DeliveryJob,
  type JobHandlers,
  type JobRunner,
  jobIds,
  type RunJob,
  type TimerJob,
} from './runner.ts';

type Entry =
  | { queue: 'run'; id: string; dueAt: number; job: RunJob; tries: number }
  | { queue: 'timer'; id: string; dueAt: number; job: TimerJob; tries: number }
  | { queue: 'webhook'; id: string; dueAt: number; job: DeliveryJob; tries: number };

const MAX_TRIES = 3;

/**
 * Embedded mode without Redis: jobs in this process. Due times are read from the injected clock
 * (polled every `pollMs`), so tests move time forward instead of sleeping.
 */
export class MemoryJobRunner implements JobRunner {
  readonly #entries = new Map<string, Entry>();
  readonly #now: () => number;
  readonly #logger: Logger;
  readonly #concurrency: number;
  #handlers: JobHandlers | undefined;
  #running = 0;
  #timer: NodeJS.Timeout | undefined;
  readonly #inflight = new Set<Promise<void>>();

  constructor(opts: { now: () => number; logger: Logger; concurrency: number; pollMs?: number }) {
    this.#now = opts.now;
    this.#logger = opts.logger;
    this.#concurrency = opts.concurrency;
    this.#pollMs = opts.pollMs ?? 25;
  }
  readonly #pollMs: number;

  async enqueueRun(job: RunJob): Promise<void> {
    this.#add({ queue: 'run', id: jobIds.run(job), dueAt: 0, job, tries: 0 });
  }
  async scheduleTimer(job: TimerJob, atMs: number): Promise<void> {
    this.#add({ queue: 'timer', id: jobIds.timer(job), dueAt: atMs, job, tries: 0 });
  }
  async scheduleDelivery(job: DeliveryJob, atMs: number): Promise<void> {
    this.#add({ queue: 'webhook', id: jobIds.delivery(job), dueAt: atMs, job, tries: 0 });
  }

  /** Ids of recently finished jobs (oldest first), so re-adding one is a no-op, as on BullMQ. */
  readonly #done = new Set<string>();

  #finished(id: string): void {
    this.#entries.delete(id);
    this.#done.add(id);
    if (this.#done.size > 10_000) this.#done.delete(this.#done.values().next().value as string);
  }

  #add(e: Entry): void {
    if (this.#entries.has(e.id) || this.#done.has(e.id)) return;
    this.#entries.set(e.id, e);
    if (e.dueAt <= this.#now()) setImmediate(() => this.#pump());
  }

  start(handlers: JobHandlers): void {
    this.#handlers = handlers;
    this.#timer = setInterval(() => this.#pump(), this.#pollMs);
    this.#timer.unref();
  }

  #pump(): void {
    const h = this.#handlers;
    if (!h) return;
    const now = this.#now();
    for (const e of this.#entries.values()) {
      if (this.#running >= this.#concurrency) return;
      if (e.dueAt > now || e.tries < 0) continue;
      const tries = e.tries;
      e.tries = -1; // running
      this.#running++;
      const p = (
        e.queue === 'run' ? h.run(e.job) : e.queue === 'timer' ? h.timer(e.job) : h.deliver(e.job)
      ).then(
        () => this.#finished(e.id),
        (err: unknown) => {
          this.#logger.warn({ msg: 'async: job failed', job: e.id, err: (err as Error).message });
          if (tries + 1 >= MAX_TRIES) this.#finished(e.id);
          else {
            e.tries = tries + 1;
            e.dueAt = this.#now() + 1000;
          }
        },
      );
      const tracked = p.finally(() => {
        this.#running--;
        this.#inflight.delete(tracked);
      });
      this.#inflight.add(tracked);
    }
  }

  async depth(): Promise<Record<'run' | 'timer' | 'webhook', number>> {
    const d = { run: 0, timer: 0, webhook: 0 };
    for (const e of this.#entries.values()) d[e.queue]++;
    return d;
  }

  async close(): Promise<void> {
    clearInterval(this.#timer);
    this.#handlers = undefined;
    await Promise.allSettled([...this.#inflight]);
  }
}
