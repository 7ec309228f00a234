import { type ConnectionOptions, type Job, Queue, Worker } from 'bullmq';
import type { Logger } from 'pino';
import type { StateClient } from '../state/connect.ts';
import { dedicatedConnection } from './connections.ts';
import { ASYNC_KEYS } from './keys.ts';
import {
  type DeliveryJob,
  type JobHandlers,
  type JobRunner,
  jobIds,
  type RunJob,
  type TimerJob,
} from './runner.ts';

const QUEUES = ASYNC_KEYS.queues;
type QueueKind = keyof typeof QUEUES;

/** Infrastructure failures (Redis blips) retry a few times; outcomes (a failed pipeline, a 5xx receiver) are not exceptions. */
const jobDefaults = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
  // Completed ids stay 15 minutes: a job re-run after a crash (within a few lock periods) that
  // re-adds the same id then adds nothing.
  removeOnComplete: { age: 900, count: 50_000 },
  removeOnFail: { age: 7 * 86_400 },
} as const;

/**
 * Jobs in Redis through BullMQ: any pod runs any job; a SIGKILLed pod's active jobs are detected as
 * stalled (lock not renewed within `lockMs`) and run again elsewhere; deadlines and webhook retries
 * are delayed jobs. Queue keys carry the `{switchyard-jobs}` hash tag, so they work on Redis Cluster.
 */
export class BullJobRunner implements JobRunner {
  readonly #queues: Record<QueueKind, Queue>;
  readonly #workers: Worker[] = [];
  readonly #conns: StateClient[] = [];
  readonly #redis: StateClient;
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #opts: { concurrency: number; lockMs: number };

  constructor(
    redis: StateClient,
    opts: { logger: Logger; now: () => number; concurrency: number; lockMs: number },
  ) {
    this.#redis = redis;
    this.#logger = opts.logger;
    this.#now = opts.now;
    this.#opts = opts;
    const conn = this.#conn('switchyard-jobs');
    const q = (name: string) =>
      new Queue(name, {
        connection: conn as ConnectionOptions,
        prefix: ASYNC_KEYS.queuePrefix,
        defaultJobOptions: jobDefaults,
      });
    this.#queues = { run: q(QUEUES.run), timer: q(QUEUES.timer), webhook: q(QUEUES.webhook) };
    for (const queue of Object.values(this.#queues))
      queue.on('error', (err) => this.#logger.warn({ msg: 'jobs: queue problem', err: err.message }));
  }

  #conn(name: string): StateClient {
    const c = dedicatedConnection(this.#redis, name);
    c.on('error', (err: Error) =>
      this.#logger.warn({ msg: 'jobs: redis connection problem', err: err.message }),
    );
    this.#conns.push(c);
    return c;
  }

  #delay(atMs: number): number {
    return Math.max(0, atMs - this.#now());
  }

  async enqueueRun(job: RunJob): Promise<void> {
    // Run jobs carry the request body: gone once done (the channel, not the job, says it ran).
    await this.#queues.run.add('run', job, { jobId: jobIds.run(job), removeOnComplete: true });
  }
  async scheduleTimer(job: TimerJob, atMs: number): Promise<void> {
    await this.#queues.timer.add(job.kind, job, { jobId: jobIds.timer(job), delay: this.#delay(atMs) });
  }
  async scheduleDelivery(job: DeliveryJob, atMs: number): Promise<void> {
    await this.#queues.webhook.add('deliver', job, { jobId: jobIds.delivery(job), delay: this.#delay(atMs) });
  }

  start(handlers: JobHandlers): void {
    const worker = <T>(kind: QueueKind, fn: (data: T) => Promise<void>) => {
      const w = new Worker(QUEUES[kind], (job: Job<T>) => fn(job.data), {
        connection: this.#conn(`switchyard-worker-${kind}`) as ConnectionOptions,
        prefix: ASYNC_KEYS.queuePrefix,
        concurrency: this.#opts.concurrency,
        lockDuration: this.#opts.lockMs,
        stalledInterval: Math.max(1000, Math.floor(this.#opts.lockMs / 2)),
        maxStalledCount: 5,
      });
      w.on('error', (err) =>
        this.#logger.warn({ msg: 'jobs: worker problem', queue: kind, err: err.message }),
      );
      w.on('failed', (job, err) =>
        this.#logger.warn({ msg: 'jobs: job failed', queue: kind, job: job?.id, err: err.message }),
      );
      this.#workers.push(w);
    };
    worker<RunJob>('run', (j) => handlers.run(j));
    worker<TimerJob>('timer', (j) => handlers.timer(j));
    worker<DeliveryJob>('webhook', (j) => handlers.deliver(j));
  }

  async depth(): Promise<Record<QueueKind, number>> {
    const count = (q: Queue) => q.getJobCountByTypes('waiting', 'delayed', 'prioritized', 'waiting-children');
    const [run, timer, webhook] = await Promise.all([
      count(this.#queues.run),
      count(this.#queues.timer),
      count(this.#queues.webhook),
    ]);
    return { run, timer, webhook };
  }

  /** Workers finish their active jobs (what is not finished is picked up by another pod as stalled). */
  async close(): Promise<void> {
    await Promise.allSettled(this.#workers.map((w) => w.close()));
    await Promise.allSettled(Object.values(this.#queues).map((q) => q.close()));
    for (const c of this.#conns) c.disconnect();
  }
}
