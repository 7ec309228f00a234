import type { NativeBody } from '../requests/native-schema.ts';
import type { TraceContext } from '../tracing/types.ts';

/** Run one accepted async request through the pipeline. */
export interface RunJob {
  channelId: string;
  projectId: string;
  /** SHA-256 of the API key that asked (the key itself never leaves the request). */
  keyHash: string;
  body: NativeBody;
  /** Unix ms when the request was accepted. */
  acceptedAt: number;
  /** Tokens admission took from token rate limits (Exchange.admittedTokens), corrected when the job ends. */
  admittedTokens?: number;
  /** The accepting request's trace context (tracing on): the run continues its trace. */
  trace?: TraceContext;
  /**
   * Set on a background response of the Responses API (`background: true`; `channelId` is then the
   * response id): its own handler runs it (gateway/src/background, which validates this shape).
   */
  response?: Record<string, unknown>;
}

/** A pipeline workflow's timer: its callback window closes, or (test mode) its simulated backend answers. */
export interface TimerJob {
  kind: 'deadline' | 'simulate';
  channelId: string;
  projectId: string;
  /** Unix ms it is due (part of the id: a deadline that fired early is re-armed as a new job). */
  atMs: number;
}

/** One webhook delivery attempt; `id` is the webhook-id, the same for every attempt and replay. */
export interface DeliveryJob {
  id: string;
  projectId: string;
  url: string;
  event: string;
  /** The raw JSON body, signed as sent. */
  body: string;
  /** 1-based. */
  attempt: number;
  /** Replays of a dead letter so far (part of the job id, so a replay is a new job). */
  replay: number;
  /** The context of the span that emitted the event (tracing on): each attempt is a span under it. */
  trace?: TraceContext;
}

export interface JobHandlers {
  run(job: RunJob): Promise<void>;
  timer(job: TimerJob): Promise<void>;
  deliver(job: DeliveryJob): Promise<void>;
}

/**
 * Where jobs wait and who runs them: BullMQ on Redis (any pod runs any job; a killed pod's jobs are
 * taken over; delayed jobs for deadlines and retries) or an in-process runner for embedded mode.
 * Adding a job whose id exists is a no-op, which makes re-enqueueing after a crash harmless.
 */
export interface JobRunner {
  enqueueRun(job: RunJob): Promise<void>;
  scheduleTimer(job: TimerJob, atMs: number): Promise<void>;
  scheduleDelivery(job: DeliveryJob, atMs: number): Promise<void>;
  start(handlers: JobHandlers): void;
  /** Jobs waiting or delayed, per queue (for the queue-depth metric). */
  depth(): Promise<Record<'run' | 'timer' | 'webhook', number>>;
  close(): Promise<void>;
}

export const jobIds = {
  run: (j: RunJob) => `run-${j.channelId}`,
  timer: (j: TimerJob) => `${j.kind}-${j.channelId}-${j.atMs}`,
  delivery: (j: DeliveryJob) => `wh-${j.id}-${j.replay}-${j.attempt}`,
};
