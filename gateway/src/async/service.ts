import type { Exchange } from '../pipeline/exchange.ts';
import type { NativeBody } from '../requests/native-schema.ts';
import type { TraceContext } from '../tracing/types.ts';
import { type AsyncAck, accept } from './accept.ts';
import { type CallbackAnswer, type CallbackInput, callback, timer } from './callbacks.ts';
import type { ChannelRecord } from './channels.ts';
import type { AsyncDeps } from './deps.ts';
import { runJob } from './run-job.ts';
import type { RunJob, TimerJob } from './runner.ts';

/**
 * Async requests end to end: accept (admit + enqueue + ack: accept.ts), run (the same pipeline as a
 * sync request, on whichever pod takes the job: job.ts), then deliver (stored result, pub/sub to
 * sockets, webhooks: delivery.ts); for pipeline workflows also the callback and its deadline
 * (callbacks.ts). Every state change is one atomic ChannelStore transition, so exactly one of any
 * racing parties completes a channel.
 */
export class AsyncService {
  readonly #d: AsyncDeps;

  constructor(deps: AsyncDeps) {
    this.#d = deps;
  }

  /** Where clients reach this gateway (configured; else each request says its own address). */
  get publicUrl(): string | undefined {
    return this.#d.config.publicUrl;
  }

  /**
   * Admits the request now (refusals are thrown for the surface's error encoder) and queues its job;
   * `channelId` is the new channel's id (the route logs the acceptance under it).
   */
  accept(ex: Exchange, body: NativeBody, baseUrl: string, channelId: string): Promise<AsyncAck> {
    return accept(this.#d, ex, body, baseUrl, channelId);
  }

  async get(projectId: string, channelId: string): Promise<ChannelRecord | undefined> {
    return this.#d.channels.get(projectId, channelId);
  }

  /** The job: run the pipeline and settle its request-log entry; deliver if this run wins. */
  run(job: RunJob): Promise<void> {
    return runJob(this.#d, job);
  }

  /** POST /v1/callback/{channel_id}, in the trace of the accepted request, linked to `link`. */
  callback(
    projectId: string,
    channelId: string,
    cb: CallbackInput,
    link?: TraceContext,
  ): Promise<CallbackAnswer> {
    return callback(this.#d, projectId, channelId, cb, link);
  }

  /** A deadline or a simulated backend came due. */
  timer(job: TimerJob): Promise<void> {
    return timer(this.#d, job);
  }
}
