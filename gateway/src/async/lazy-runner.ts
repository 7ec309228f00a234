import type { Logger } from 'pino';
import type { StateClient } from '../state/connect.ts';
import { pendingJobKeys } from './keys.ts';
import type { DeliveryJob, JobHandlers, JobRunner, RunJob, TimerJob } from './runner.ts';

type Depth = Awaited<ReturnType<JobRunner['depth']>>;

export interface LazyRunnerOptions {
  /** Builds the real runner (BullMQ: its module, four Redis connections, three workers). */
  create(): Promise<JobRunner>;
  redis: StateClient;
  /** How often an idle pod looks for jobs left to run (another pod's, e.g. one that was killed). */
  probeMs: number;
  logger: Logger;
}

/**
 * The job runner of a pod that may never run a job: BullMQ (about 25 MB of RSS and four Redis
 * connections) is loaded and its workers started on first need: the first job this pod queues, or
 * the first time a probe finds unfinished jobs in the queues (queued by another pod, or left by one
 * that was killed), so every job still finds a worker. The probe is one EXISTS over the queues'
 * pending keys every `probeMs`; it stops once the runner is up.
 */
export class LazyJobRunner implements JobRunner {
  readonly #o: LazyRunnerOptions;
  #runner: Promise<JobRunner> | undefined;
  #handlers: JobHandlers | undefined;
  #probe: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(opts: LazyRunnerOptions) {
    this.#o = opts;
  }

  /** Whether the real runner has been asked for (loaded or loading). */
  get active(): boolean {
    return this.#runner !== undefined;
  }

  #get(): Promise<JobRunner> {
    if (this.#runner) return this.#runner;
    clearInterval(this.#probe);
    const made = this.#o.create().then((r) => {
      if (this.#handlers && !this.#closed) r.start(this.#handlers);
      return r;
    });
    made.catch(() => {
      // A failed load is tried again on the next need.
      if (this.#runner === made) this.#runner = undefined;
    });
    this.#runner = made;
    return made;
  }

  async #pending(): Promise<boolean> {
    return (await this.#o.redis.exists(...pendingJobKeys())) > 0;
  }

  async enqueueRun(job: RunJob): Promise<void> {
    await (await this.#get()).enqueueRun(job);
  }
  async scheduleTimer(job: TimerJob, atMs: number): Promise<void> {
    await (await this.#get()).scheduleTimer(job, atMs);
  }
  async scheduleDelivery(job: DeliveryJob, atMs: number): Promise<void> {
    await (await this.#get()).scheduleDelivery(job, atMs);
  }

  start(handlers: JobHandlers): void {
    this.#handlers = handlers;
    if (this.#runner) return;
    const look = () => {
      this.#pending().then(
        (some) => {
          if (some && !this.#closed) void this.#get().catch((err: unknown) => this.#failed(err));
        },
        () => undefined, // Redis away: look again next time.
      );
    };
    look();
    this.#probe = setInterval(look, this.#o.probeMs);
    this.#probe.unref();
  }

  #failed(err: unknown): void {
    this.#o.logger.warn({ msg: 'jobs: cannot start the job runner', err: (err as Error).message });
  }

  /** Empty queues need no runner to say so; anything pending brings the runner up to count it. */
  async depth(): Promise<Depth> {
    if (!this.#runner && !(await this.#pending())) return { run: 0, timer: 0, webhook: 0 };
    return (await this.#get()).depth();
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#probe);
    const runner = this.#runner;
    if (runner) await (await runner).close();
  }
}
