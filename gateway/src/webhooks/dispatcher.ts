import { createHash, randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { DeliveryJob, JobRunner } from '../async/runner.ts';
import { BlockedDestinationError, outboundFetch } from '../outbound/fetch.ts';
import type { RuntimeProject } from '../snapshot/runtime.ts';
import type { SnapshotStore } from '../snapshot/store.ts';
import { eventEntry } from '../state/event-entry.ts';
import type { RuntimeState } from '../state/types.ts';
import type { TraceContext, Tracing, WebhookTrace } from '../tracing/types.ts';
import { nextAttemptDelay, parseRetryAfter } from './schedule.ts';
import { signatureHeaders } from './sign.ts';
import type { DeadLetter, WebhookStore } from './store.ts';

export const DELIVERY_TIMEOUT_MS = 15_000;

export interface WebhookDeps {
  snapshots: SnapshotStore;
  runner: JobRunner;
  store: WebhookStore;
  state: RuntimeState;
  registry: Registry;
  logger: Logger;
  now: () => number;
  tracing: Tracing;
  random?: () => number;
}

type AttemptOutcome = 'delivered' | 'retry' | 'dead_letter' | 'disabled' | 'dropped';

/**
 * Webhook deliveries (docs/api.md, "Async requests, WebSocket and webhooks"): one job per attempt, signed at send
 * time with the endpoint's current secret, retried on the backoff schedule, dead-lettered when the
 * budget is spent, and every attempt written to the project's request log as `webhook_attempt`.
 */
export class WebhookDispatcher {
  readonly #d: WebhookDeps;
  readonly #random: () => number;
  readonly #attempts: Counter<'outcome'>;
  readonly #dead: Counter<never>;

  constructor(deps: WebhookDeps) {
    this.#d = deps;
    this.#random = deps.random ?? Math.random;
    this.#attempts = new Counter({
      name: 'switchyard_webhook_attempts_total',
      help: 'Webhook delivery attempts, by outcome (delivered, retry, dead_letter, disabled, dropped).',
      labelNames: ['outcome'] as const,
      registers: [deps.registry],
    });
    this.#dead = new Counter({
      name: 'switchyard_webhook_dead_letters_total',
      help: 'Webhook deliveries dead-lettered after their last attempt or at a disabled endpoint.',
      registers: [deps.registry],
    });
    const runner = deps.runner;
    new Gauge({
      name: 'switchyard_job_queue_depth',
      help: 'Jobs waiting or delayed, by queue (run: async requests, timer: callback deadlines, webhook: deliveries).',
      labelNames: ['queue'] as const,
      registers: [deps.registry],
      async collect() {
        try {
          const d = await runner.depth();
          for (const [queue, n] of Object.entries(d)) this.set({ queue }, n);
        } catch {
          // Redis away: the last values stay.
        }
      },
    });
  }

  /**
   * Queues `event` to every endpoint of the project subscribed to it. The webhook-id is derived
   * from `dedupeKey`, so a job that runs twice (a pod killed after emitting) queues nothing new.
   * Every attempt is a span under `trace`, the emitter's context, when tracing is on.
   */
  async emit(
    project: RuntimeProject,
    event: string,
    payload: Record<string, unknown>,
    dedupeKey: string,
    trace?: TraceContext,
  ): Promise<number> {
    const targets = project.webhooks.filter((w) => w.events.includes(event));
    if (targets.length === 0) return 0;
    const body = JSON.stringify({
      type: event,
      timestamp: new Date(this.#d.now()).toISOString(),
      ...payload,
    });
    await Promise.all(
      targets.map((w) => {
        const id = `msg_${createHash('sha256').update(`${project.config.id}\n${w.url}\n${event}\n${dedupeKey}`).digest('hex').slice(0, 32)}`;
        return this.#d.runner.scheduleDelivery(
          {
            id,
            projectId: project.config.id,
            url: w.url,
            event,
            body,
            attempt: 1,
            replay: 0,
            ...(trace ? { trace } : {}),
          },
          this.#d.now(),
        );
      }),
    );
    return targets.length;
  }

  /**
   * `emit` for code that knows only the project id (the spend-cap reporter's `budget.threshold`).
   * Never rejects: a delivery that cannot be queued is logged, and the caller carries on.
   */
  async emitFor(
    projectId: string,
    event: string,
    payload: Record<string, unknown>,
    dedupeKey: string,
  ): Promise<number> {
    const project = this.#d.snapshots.current?.projects.get(projectId);
    if (!project) return 0;
    try {
      return await this.emit(project, event, payload, dedupeKey);
    } catch (err) {
      this.#d.logger.warn({
        msg: 'webhooks: cannot queue event',
        event,
        project: projectId,
        err: (err as Error).message,
      });
      return 0;
    }
  }

  /** One attempt (the job handler). Throws only when the outcome could not be recorded, so the job retries. */
  async deliver(job: DeliveryJob): Promise<void> {
    const project = this.#d.snapshots.current?.projects.get(job.projectId);
    const endpoint = project?.webhooks.find((w) => w.url === job.url);
    if (!project || !endpoint) {
      // The project or its endpoint was removed from the config: nobody to deliver to.
      this.#attempts.inc({ outcome: 'dropped' });
      return;
    }
    const span = this.#d.tracing.webhook(job);
    try {
      await this.#attempt(project, endpoint, job, span);
    } catch (err) {
      span.end('error', 0, { type: 'internal_error', message: (err as Error).message });
      throw err;
    }
  }

  async #attempt(
    project: RuntimeProject,
    endpoint: RuntimeProject['webhooks'][number],
    job: DeliveryJob,
    span: WebhookTrace,
  ): Promise<void> {
    if (await this.#d.store.isDisabled(job.projectId, job.url)) {
      await this.#deadLetter(job, null, 'endpoint disabled (it answered 410 Gone)');
      span.end('disabled', 0, { type: 'endpoint_disabled', message: 'the endpoint is disabled' });
      this.#record(project, job, 0, 0, 'disabled', 'endpoint_disabled', undefined, span.traceId);
      return;
    }
    const started = performance.now();
    const sentAt = this.#d.now();
    let status = 0;
    let error: string | undefined;
    let errorType: string | undefined;
    let retryAfterMs: number | undefined;
    try {
      const res = await outboundFetch(
        job.url,
        {
          method: 'POST',
          headers: {
            ...signatureHeaders(endpoint.secrets, job.id, Math.floor(sentAt / 1000), job.body),
            'user-agent': 'switchyard-webhooks/1',
            'webhook-event': job.event,
            // The receiver can continue the trace (tracing on only).
            ...span.context,
          },
          body: job.body,
          timeoutMs: DELIVERY_TIMEOUT_MS,
        },
        { allowPrivateNetworks: project.config.allowPrivateNetworks },
      );
      status = res.status;
      const ra = res.headers['retry-after'];
      retryAfterMs = parseRetryAfter(Array.isArray(ra) ? ra[0] : ra, this.#d.now());
    } catch (err) {
      error = err instanceof BlockedDestinationError ? `blocked: ${err.message}` : (err as Error).message;
      errorType =
        err instanceof BlockedDestinationError
          ? 'blocked_destination'
          : String((err as { code?: unknown }).code ?? (err as Error).name);
    }
    const durationMs = performance.now() - started;
    let outcome: AttemptOutcome;
    let nextAt: number | undefined;
    if (status >= 200 && status < 300) outcome = 'delivered';
    else if (status === 410) {
      await this.#d.store.disable(job.projectId, job.url, this.#d.now());
      await this.#deadLetter(job, status, 'endpoint answered 410 Gone: disabled');
      outcome = 'disabled';
    } else {
      const wait = nextAttemptDelay(job.attempt, retryAfterMs, this.#random);
      if (wait === undefined) {
        await this.#deadLetter(job, status || null, error ?? `HTTP ${status}`);
        outcome = 'dead_letter';
      } else {
        nextAt = this.#d.now() + wait;
        await this.#d.runner.scheduleDelivery({ ...job, attempt: job.attempt + 1 }, nextAt);
        outcome = 'retry';
      }
    }
    span.end(
      outcome,
      status,
      outcome === 'delivered'
        ? undefined
        : { type: errorType ?? String(status), message: error ?? `HTTP ${status}` },
    );
    this.#record(project, job, status, durationMs, outcome, error, nextAt, span.traceId);
  }

  async #deadLetter(job: DeliveryJob, status: number | null, error: string): Promise<void> {
    const d: DeadLetter = {
      id: job.id,
      url: job.url,
      event: job.event,
      body: job.body,
      attempts: job.attempt,
      last_status: status,
      last_error: error,
      dead_at: this.#d.now(),
      replays: job.replay,
    };
    await this.#d.store.deadLetter(job.projectId, d);
    this.#dead.inc();
  }

  #record(
    project: RuntimeProject,
    job: DeliveryJob,
    status: number,
    durationMs: number,
    outcome: AttemptOutcome,
    error: string | undefined,
    nextAt: number | undefined,
    traceId: string | null,
  ): void {
    this.#attempts.inc({ outcome });
    const ok = outcome === 'delivered';
    let channel: string | null = null;
    try {
      const parsed = JSON.parse(job.body) as { channel_id?: unknown };
      if (typeof parsed.channel_id === 'string') channel = parsed.channel_id;
    } catch {}
    const entry = eventEntry({
      request_log_id: randomUUID(),
      type: 'webhook_attempt',
      time: new Date(this.#d.now()).toISOString(),
      project_id: project.config.id,
      method: 'POST',
      channel_id: channel,
      status: ok ? 'success' : 'error',
      outcome: ok ? 'success' : outcome,
      http_status: status,
      error_code: ok ? null : (error ?? `http_${status}`),
      duration_ms: Math.round(durationMs * 1000) / 1000,
      trace_id: traceId,
      details: {
        webhook_id: job.id,
        event: job.event,
        url: job.url,
        attempt: job.attempt,
        replay: job.replay,
        result: outcome,
        next_attempt_at: nextAt === undefined ? null : new Date(nextAt).toISOString(),
      },
    });
    this.#d.state.write({
      projectId: project.config.id,
      log: entry,
      logCap: project.config.requestLogs.maxEntries,
    });
  }

  deadLetters(projectId: string, sinceMs: number, limit: number): Promise<DeadLetter[]> {
    return this.#d.store.listDeadLetters(projectId, sinceMs, limit);
  }

  disabledEndpoints(projectId: string): Promise<string[]> {
    return this.#d.store.disabledEndpoints(projectId);
  }

  countDeadLetters(projectId: string): Promise<number> {
    return this.#d.store.countDeadLetters(projectId);
  }

  /** Sends a dead letter again, from attempt 1, with the same webhook-id; re-enables its endpoint. */
  async replay(projectId: string, id: string): Promise<boolean> {
    const d = await this.#d.store.takeDeadLetter(projectId, id);
    if (!d) return false;
    await this.#d.store.enable(projectId, d.url);
    await this.#d.runner.scheduleDelivery(
      { id: d.id, projectId, url: d.url, event: d.event, body: d.body, attempt: 1, replay: d.replays + 1 },
      this.#d.now(),
    );
    return true;
  }

  /** Replays every letter dead at or after `sinceMs` (at most 10,000 per call; call again for more). */
  async replaySince(projectId: string, sinceMs: number): Promise<number> {
    const letters = await this.#d.store.listDeadLetters(projectId, sinceMs, 10_000);
    let n = 0;
    for (const d of letters) if (await this.replay(projectId, d.id)) n++;
    return n;
  }
}
