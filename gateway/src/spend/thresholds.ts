import { Gauge, type Registry } from 'prom-client';
import { microsToUsd, spendState } from '#contract';
import { eventEntry } from '../state/event-entry.ts';
import type { RequestLogEntry } from '../state/types.ts';
import type { CapRule } from './rules.ts';
import type { CapRef, Crossing, LeaseResult } from './store.ts';

const GAUGE = 'switchyard_spend_cap_used_ratio';

function usedGauge(registry: Registry): Gauge<'project' | 'cap' | 'scope' | 'period'> {
  const existing = registry.getSingleMetric(GAUGE);
  if (existing instanceof Gauge) return existing as Gauge<'project' | 'cap' | 'scope' | 'period'>;
  return new Gauge({
    name: GAUGE,
    help: 'Spend of the current period over the cap limit, per SpendCap, as this gateway last saw it (1 = exceeded).',
    labelNames: ['project', 'cap', 'scope', 'period'] as const,
    registers: [registry],
  });
}

export type CapInPeriod = CapRef & { resetAt: Date };

/** What a threshold event reads of a pod's lease on a cap (a CapLease has it). */
export interface LeasedCap {
  readonly rule: CapRule;
  readonly ref: CapInPeriod;
  /** The last request that ended on it: the one a crossing is reported with. */
  readonly lastRequestId?: string | undefined;
}

/** Where a `budget.threshold` event goes: the project's request log and its webhook subscribers. */
export interface ThresholdSink {
  log(projectId: string, entry: RequestLogEntry): void;
  /** Queues the webhook event; `id` is the same on every gateway, so it is delivered once. */
  emit(projectId: string, payload: Record<string, unknown>, id: string): void;
}

/**
 * What a settle or a refusal tells about caps: the used-ratio gauge, and the `budget.threshold`
 * event the first time a period reaches 80 % (warning), 90 % (critical) and 100 % (exceeded). The
 * stores report each crossing once per period across all gateways (the level is kept next to the
 * spend); the event is a request-log entry of type `budget_threshold` and a `budget.threshold`
 * webhook to the project's subscribers.
 */
export class CapReporter {
  readonly #gauge: Gauge<'project' | 'cap' | 'scope' | 'period'>;
  readonly #sink: ThresholdSink;
  readonly #now: () => number;

  constructor(registry: Registry, sink: ThresholdSink, now: () => number) {
    this.#gauge = usedGauge(registry);
    this.#sink = sink;
    this.#now = now;
  }

  used(projectId: string, rule: CapRule, spentMicros: number): void {
    const c = rule.config;
    const ratio = rule.limitMicros > 0 ? spentMicros / rule.limitMicros : spentMicros > 0 ? 1 : 0;
    this.#gauge.set({ project: projectId, cap: c.id, scope: c.scope, period: c.period }, ratio);
  }

  /** A lease call's answer for the caps it carried: their spend, and the thresholds it crossed. */
  answered(projectId: string, caps: readonly LeasedCap[], result: LeaseResult): void {
    caps.forEach((l, i) => {
      this.used(projectId, l.rule, result.caps[i]!.spent);
    });
    for (const x of result.crossings) {
      const lease = caps[x.index];
      if (!lease) continue;
      const log = this.#entry(projectId, lease.lastRequestId ?? '', lease.rule, lease.ref, x);
      this.#sink.log(projectId, log);
      this.#sink.emit(projectId, log.details ?? {}, log.request_log_id);
    }
  }

  #entry(
    projectId: string,
    requestId: string,
    rule: CapRule,
    ref: CapInPeriod,
    x: Crossing,
  ): RequestLogEntry {
    const c = rule.config;
    return eventEntry({
      // Deterministic: one id per cap, period and threshold.
      request_log_id: `budget-threshold:${c.id}:${ref.key.slice(ref.key.lastIndexOf(':') + 1)}:${x.level}`,
      type: 'budget_threshold',
      time: new Date(this.#now()).toISOString(),
      project_id: projectId,
      workflow: c.workflow ?? null,
      status: 'success',
      outcome: spendState(x.spentMicros, rule.limitMicros),
      details: {
        event: 'budget.threshold',
        cap_id: c.id,
        scope: c.scope,
        ...(c.workflow ? { workflow: c.workflow, slot: c.slot } : {}),
        period: c.period,
        threshold_percent: x.level,
        state: spendState(x.spentMicros, rule.limitMicros),
        spent_usd: microsToUsd(x.spentMicros),
        limit_usd: microsToUsd(rule.limitMicros),
        reset_at: ref.resetAt.toISOString(),
        request_log_id: requestId,
      },
    });
  }
}
