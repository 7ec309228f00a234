import { Counter, Gauge, type Registry } from 'prom-client';

/**
 * State-layer metrics. Several states (tests, a restart of the layer) may share one registry, so each
 * metric is reused when the registry already holds it instead of failing on a duplicate name.
 */

function counter<L extends string>(registry: Registry, name: string, help: string, labelNames: readonly L[]) {
  const existing = registry.getSingleMetric(name);
  if (existing instanceof Counter) return existing as Counter<L>;
  return new Counter<L>({ name, help, labelNames, registers: [registry] });
}

function gauge(registry: Registry, name: string, help: string): Gauge {
  const existing = registry.getSingleMetric(name);
  if (existing instanceof Gauge) return existing as Gauge;
  return new Gauge({ name, help, registers: [registry] });
}

export type WriteKind = 'log' | 'usage';

export interface StateWriteMetrics {
  dropped: Counter<'kind'>;
  buffered: Counter<'kind'>;
  retried: Counter<'kind'>;
  deduplicated: Counter<'kind'>;
  bufferSize: Gauge;
}

export function stateWriteMetrics(registry: Registry): StateWriteMetrics {
  return {
    dropped: counter(
      registry,
      'switchyard_state_writes_dropped_total',
      'Request-log entries and usage increments given up on (buffer overflow, refused by Redis, shutdown).',
      ['kind'],
    ),
    buffered: counter(
      registry,
      'switchyard_state_writes_buffered_total',
      'Request-log entries and usage increments buffered in memory because Redis could not take them.',
      ['kind'],
    ),
    retried: counter(
      registry,
      'switchyard_state_writes_retried_total',
      'Buffered request-log entries and usage increments sent to Redis again.',
      ['kind'],
    ),
    deduplicated: counter(
      registry,
      'switchyard_state_writes_deduplicated_total',
      'Request-log entries and usage increments sent again that Redis had already applied (their first reply was lost): not written twice.',
      ['kind'],
    ),
    bufferSize: gauge(
      registry,
      'switchyard_state_write_buffer_settlements',
      'Settlements waiting in memory for Redis to come back.',
    ),
  };
}

export function stateUnavailableCounter(registry: Registry): Counter<'feature' | 'decision'> {
  return counter(
    registry,
    'switchyard_state_unavailable_total',
    'Decisions taken because runtime state (Redis) was unreachable, by feature and decision (open: allowed, closed: refused).',
    ['feature', 'decision'],
  );
}
