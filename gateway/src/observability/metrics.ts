import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** How often the event-loop delay histogram (nodejs_eventloop_lag_*) takes a sample. */
const EVENT_LOOP_SAMPLE_MS = 50;

/** Gateway metrics. One registry per gateway instance, so tests can run several side by side. */
export class GatewayMetrics {
  readonly registry = new Registry();

  readonly requests = new Counter({
    name: 'switchyard_requests_total',
    help: 'Requests served, by API surface, project, workflow, used provider and model, and outcome.',
    labelNames: ['surface', 'project', 'workflow', 'provider', 'model', 'outcome'] as const,
    registers: [this.registry],
  });

  readonly duration = new Histogram({
    name: 'switchyard_request_duration_seconds',
    help: 'End-to-end request duration as seen by the gateway.',
    labelNames: ['surface', 'outcome'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [this.registry],
  });

  readonly upstream = new Histogram({
    name: 'switchyard_upstream_duration_seconds',
    help: 'Duration of one upstream attempt, by provider, model and result.',
    labelNames: ['provider', 'model', 'result'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [this.registry],
  });

  readonly ttft = new Histogram({
    name: 'switchyard_time_to_first_token_seconds',
    help: 'Time from request arrival to the first streamed content chunk.',
    labelNames: ['surface', 'provider', 'model'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });

  readonly tokens = new Counter({
    name: 'switchyard_tokens_total',
    help: 'Tokens reported by providers, by project, workflow, provider, model and direction.',
    labelNames: ['project', 'workflow', 'provider', 'model', 'direction'] as const,
    registers: [this.registry],
  });

  readonly failovers = new Counter({
    name: 'switchyard_failovers_total',
    help: 'Attempts that failed or were skipped and passed the request to the next slot.',
    labelNames: ['project', 'workflow', 'provider', 'model', 'reason'] as const,
    registers: [this.registry],
  });

  /**
   * Requests being served right now, per surface: a plain count per request, which the gauge reads
   * when it is scraped (a labelled gauge's inc and dec hash and validate their labels every time).
   */
  readonly inFlight = new InFlight();

  readonly inFlightGauge = new Gauge({
    name: 'switchyard_requests_in_flight',
    help: 'Requests being served right now.',
    labelNames: ['surface'] as const,
    registers: [this.registry],
    collect: () => {
      for (const [surface, n] of this.inFlight.counts) this.inFlightGauge.set({ surface }, n);
    },
  });

  readonly snapshotInfo = new Gauge({
    name: 'switchyard_snapshot_info',
    help: 'The config snapshot being served (value 1, version in the label).',
    labelNames: ['version'] as const,
    registers: [this.registry],
  });

  readonly snapshotLoaded = new Gauge({
    name: 'switchyard_snapshot_loaded_timestamp_seconds',
    help: 'When the current snapshot was installed.',
    registers: [this.registry],
  });

  readonly connections = new Gauge({
    name: 'switchyard_http_connections',
    help: 'Open client connections on the API port (HTTP and WebSocket).',
    registers: [this.registry],
  });

  readonly connectionsRefused = new Counter({
    name: 'switchyard_http_connections_refused_total',
    help: 'Client connections closed on arrival because the pod held SWITCHYARD_MAX_CONNECTIONS already.',
    registers: [this.registry],
  });

  readonly requestTimeouts = new Counter({
    name: 'switchyard_http_request_timeouts_total',
    help: 'Requests answered 408 because their headers or body did not arrive in time, by phase.',
    labelNames: ['phase'] as const,
    registers: [this.registry],
  });

  readonly idleClosed = new Counter({
    name: 'switchyard_http_idle_connections_closed_total',
    help: 'Keep-alive connections closed after SWITCHYARD_KEEP_ALIVE_TIMEOUT_MS without a request.',
    registers: [this.registry],
  });

  constructor() {
    // Standard names (process_*, nodejs_*), no prefix, so stock Node.js dashboards find them; the
    // scrape's job/pod labels tell gateway from operator. The event-loop delay is sampled every
    // 50 ms rather than prom-client's 10: each sample wakes the process, and an idle pod woke a
    // hundred times a second for it. Any stall of 50 ms or more still lands in the histogram.
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
    // prom-client's `*_total` gauges break the naming rules (`promtool check metrics` refuses a
    // `_total` suffix on a non-counter); the per-type gauges of the same name without it remain.
    for (const name of [
      'nodejs_active_handles_total',
      'nodejs_active_requests_total',
      'nodejs_active_resources_total',
    ])
      this.registry.removeSingleMetric(name);
  }

  setSnapshot(version: string): void {
    this.snapshotInfo.reset();
    this.snapshotInfo.set({ version }, 1);
    this.snapshotLoaded.set(Date.now() / 1000);
  }
}

/** Requests in flight per surface. */
export class InFlight {
  readonly counts = new Map<string, number>();

  inc(surface: string): void {
    this.counts.set(surface, (this.counts.get(surface) ?? 0) + 1);
  }

  dec(surface: string): void {
    this.counts.set(surface, (this.counts.get(surface) ?? 0) - 1);
  }
}
