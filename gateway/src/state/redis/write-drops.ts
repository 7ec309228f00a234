import type { Logger } from 'pino';
import type { Counter } from 'prom-client';
import type { StateWriteMetrics } from '../metrics.ts';
import type { StateWrite } from '../types.ts';

/** A dropped-write log line at most this often; the counter has the exact figures. */
const DROP_LOG_EVERY_MS = 10_000;

/** Counts a settlement's parts (its log entry, its usage) on a per-kind counter. */
export function countWrite(counter: Counter<'kind'>, s: StateWrite): void {
  if (s.log) counter.inc({ kind: 'log' });
  if (s.usage) counter.inc({ kind: 'usage' });
}

/**
 * Writes given up on: each counted on switchyard_state_writes_dropped_total at once, and logged at
 * most every DROP_LOG_EVERY_MS with how many went since the last line, so an outage that drops
 * thousands does not flood the log.
 */
export class DropReport {
  readonly #logger: Logger;
  readonly #metrics: StateWriteMetrics;
  readonly #now: () => number;
  #unlogged = 0;
  #lastLog = -Infinity;

  constructor(logger: Logger, metrics: StateWriteMetrics, now: () => number) {
    this.#logger = logger;
    this.#metrics = metrics;
    this.#now = now;
  }

  drop(s: StateWrite, reason: string, log = s.log !== undefined, usage = s.usage !== undefined): void {
    if (log) this.#metrics.dropped.inc({ kind: 'log' });
    if (usage) this.#metrics.dropped.inc({ kind: 'usage' });
    this.#unlogged++;
    const now = this.#now();
    if (now - this.#lastLog >= DROP_LOG_EVERY_MS) {
      this.#logger.error({
        msg: 'state: dropped request-log entries and usage (see switchyard_state_writes_dropped_total)',
        reason,
        dropped: this.#unlogged,
        project: s.projectId,
      });
      this.#unlogged = 0;
      this.#lastLog = now;
    }
  }

  /** Logs the drops not yet reported (at shutdown). */
  report(): void {
    if (this.#unlogged === 0) return;
    this.#lastLog = -Infinity;
    this.#logger.error({ msg: 'state: dropped writes since the last report', dropped: this.#unlogged });
    this.#unlogged = 0;
  }
}
