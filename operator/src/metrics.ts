import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/** Operator metrics on their own registry (two operators in one test process must not collide). */
export class OperatorMetrics {
  readonly registry = new Registry();
  readonly reconciles = new Counter({
    name: 'switchyard_operator_reconciles_total',
    help: 'Reconciles by kind (Snapshot, SpendCapSpend, or the object kind for status) and result.',
    labelNames: ['kind', 'result'] as const,
    registers: [this.registry],
  });
  readonly reconcileDuration = new Histogram({
    name: 'switchyard_operator_reconcile_duration_seconds',
    help: 'Duration of a reconcile pass.',
    labelNames: ['kind'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly queueDepth = new Gauge({
    name: 'switchyard_operator_queue_depth',
    help: 'Keys waiting in the work queue.',
    registers: [this.registry],
  });
  readonly snapshotInfo = new Gauge({
    name: 'switchyard_operator_snapshot_info',
    help: 'The snapshot version last published (value 1).',
    labelNames: ['version'] as const,
    registers: [this.registry],
  });
  readonly snapshotBytes = new Gauge({
    name: 'switchyard_operator_snapshot_size_bytes',
    help: 'Size of the last compiled snapshot JSON.',
    registers: [this.registry],
  });
  readonly snapshotObjects = new Gauge({
    name: 'switchyard_operator_snapshot_objects',
    help: 'Objects compiled into the last snapshot, by kind and readiness.',
    labelNames: ['kind', 'ready'] as const,
    registers: [this.registry],
  });
  readonly lastPublish = new Gauge({
    name: 'switchyard_operator_last_publish_timestamp_seconds',
    help: 'Unix time of the last successful publish (or unchanged-version check).',
    registers: [this.registry],
  });
  readonly leader = new Gauge({
    name: 'switchyard_operator_leader',
    help: '1 while this replica holds the Lease.',
    registers: [this.registry],
  });
  readonly statusWrites = new Counter({
    name: 'switchyard_operator_status_writes_total',
    help: 'Status subresource writes by kind.',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });

  constructor() {
    // Process and Node.js runtime metrics under their standard names, as the gateway exports them,
    // the event-loop delay sampled every 50 ms as there (each sample wakes the process).
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: 50 });
    // `*_total` gauges break the naming rules (`promtool check metrics`); the per-type gauges remain.
    for (const name of [
      'nodejs_active_handles_total',
      'nodejs_active_requests_total',
      'nodejs_active_resources_total',
    ])
      this.registry.removeSingleMetric(name);
  }

  setSnapshotVersion(version: string): void {
    this.snapshotInfo.reset();
    this.snapshotInfo.set({ version }, 1);
  }
}

export interface HealthSource {
  healthy(): boolean;
  ready(): boolean;
}

/** Serves /metrics, /healthz and /readyz (plain node:http; nothing else listens on this port). */
export async function startMetricsServer(
  metrics: OperatorMetrics,
  health: HealthSource,
  port: number,
  host = '0.0.0.0',
): Promise<{ server: Server; url: string; close(): Promise<void> }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/metrics') {
      metrics.registry.metrics().then(
        (body) => {
          res.writeHead(200, { 'content-type': metrics.registry.contentType });
          res.end(body);
        },
        () => {
          res.writeHead(500);
          res.end();
        },
      );
      return;
    }
    if (path === '/healthz' || path === '/readyz') {
      const ok = path === '/healthz' ? health.healthy() : health.ready();
      res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: ok ? 'ok' : 'unavailable' }));
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end('{"error":"not_found"}');
  });
  await new Promise<void>((r, j) => {
    server.once('error', j);
    server.listen(port, host, () => r());
  });
  const addr = server.address() as AddressInfo;
  const shown = host === '0.0.0.0' ? '127.0.0.1' : host;
  return {
    server,
    url: `http://${shown}:${addr.port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
