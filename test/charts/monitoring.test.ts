/**
 * The alert rules and the Grafana dashboard: promtool checks and unit-tests every alert, each
 * runbook link lands on a section of docs/operations.md, and every metric name the rules and
 * panels use is one a live gateway or operator exports (and every exported Switchyard family has
 * a panel).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { type RunningRedis, startRedis } from '#devkit/redis';
import { GatewayMetrics } from '#gateway/observability/metrics';
import { createRuntimeState } from '#gateway/state/index';
import { OperatorMetrics, startMetricsServer } from '#operator/metrics';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { exportedNames, familyOf, metricNames } from './promql.ts';
import {
  buildChartTools,
  CHART,
  find,
  locatePromtool,
  parseObjects,
  REQUIRED_VALUES,
  root,
  template,
} from './tools.ts';

const ALERTS_FILE = join(CHART, 'files/alerts.yaml');
const RULE_TESTS = join(root, 'test/charts/alerts.rules-test.yaml');
const EXAMPLE_KEY = 'sy_live_HEUADsAxMSNV8on9X3NkkU2lkBArrZ1v';

interface Rule {
  alert: string;
  expr: string;
  annotations: Record<string, string>;
}
const rules = (parse(readFileSync(ALERTS_FILE, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap(
  (g) => g.rules,
);

interface Panel {
  title: string;
  type: string;
  targets?: { expr: string }[];
  panels?: Panel[];
}
const dashboard = JSON.parse(readFileSync(join(CHART, 'files/dashboard.json'), 'utf8')) as {
  uid: string;
  panels: Panel[];
  templating: { list: { name: string; type: string; query?: { query: string } | string }[] };
};

function promtool(args: string[]): { out: string; code: number } {
  const r = spawnSync(locatePromtool(), args, { encoding: 'utf8', cwd: root });
  return { out: `${r.stdout}${r.stderr}`, code: r.status ?? 1 };
}

describe('alert rules', () => {
  it('promtool check rules accepts the rule file', () => {
    const r = promtool(['check', 'rules', ALERTS_FILE]);
    expect(r.out).toContain(`SUCCESS: ${rules.length} rules found`);
    expect(r.code).toBe(0);
  });

  it('promtool check rules accepts what the chart puts in the PrometheusRule', async () => {
    await buildChartTools();
    const objects = parseObjects(
      await template(CHART, [...REQUIRED_VALUES, '--set', 'prometheusRule.enabled=true']),
    );
    const dir = mkdtempSync(join(tmpdir(), 'sy-rules-'));
    try {
      const file = join(dir, 'rendered.yaml');
      writeFileSync(file, JSON.stringify(find(objects, 'PrometheusRule').spec));
      const r = promtool(['check', 'rules', file]);
      expect(r.out).toContain(`SUCCESS: ${rules.length} rules found`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('promtool test rules: every unit test passes', () => {
    const r = promtool(['test', 'rules', RULE_TESTS]);
    expect(r.out).toContain('SUCCESS');
    expect(r.code, r.out).toBe(0);
  });

  it('every alert has a unit test in which it fires', () => {
    const tests = parse(readFileSync(RULE_TESTS, 'utf8')) as {
      tests: { alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[] }[];
    };
    const firing = new Set(
      tests.tests.flatMap((t) =>
        (t.alert_rule_test ?? []).filter((a) => a.exp_alerts.length).map((a) => a.alertname),
      ),
    );
    expect(rules.map((r) => r.alert).filter((a) => !firing.has(a))).toEqual([]);
    expect(rules.length).toBeGreaterThanOrEqual(6);
  });

  it('every alert has a summary, a severity and a runbook section in docs/operations.md', () => {
    const doc = readFileSync(join(root, 'docs/operations.md'), 'utf8');
    const anchors = new Set(
      [...doc.matchAll(/^#{1,6} (.+)$/gm)].map((m) =>
        (m[1] ?? '')
          .trim()
          .toLowerCase()
          .replace(/[^a-z0-9 _-]/g, '')
          .replace(/ /g, '-'),
      ),
    );
    for (const r of rules) {
      expect(r.annotations.summary, r.alert).toBeTruthy();
      const [file, anchor] = (r.annotations.runbook ?? '').split('#');
      expect(file, r.alert).toBe('docs/operations.md');
      expect(anchors.has(anchor ?? ''), `${r.alert}: no section #${anchor} in docs/operations.md`).toBe(true);
    }
  });
});

describe('metric names against live /metrics pages', () => {
  let gateway: RunningGateway;
  let redis: RunningRedis;
  let operator: Awaited<ReturnType<typeof startMetricsServer>>;
  let exported: Set<string>;
  let families: Set<string>;

  beforeAll(async () => {
    const manifests = readdirSync(join(root, 'examples'))
      .filter((f) => f.endsWith('.yaml'))
      .flatMap((f) =>
        parseAllDocuments(readFileSync(join(root, 'examples', f), 'utf8')).map((d) => d.toJS() as object),
      )
      .filter(Boolean);
    // Runtime state on a real Redis, as a gateway pod keeps it (its families exist only then).
    redis = await startRedis();
    gateway = await startGateway(manifests, {
      state: (metrics, logger) =>
        createRuntimeState({ redis: { url: redis.url }, registry: metrics.registry, logger }),
    });
    // One request, so the request families have samples, not only HELP/TYPE lines. Until the
    // state client has connected, spend caps fail closed (503), so ask until it has.
    const ask = () =>
      fetch(`${gateway.url}/v1/ai`, {
        method: 'POST',
        headers: { authorization: `Bearer ${EXAMPLE_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ workflow: 'support-chat', messages: [{ role: 'user', content: 'hi' }] }),
      });
    let res = await ask();
    for (let i = 0; res.status === 503 && i < 50; i++) {
      await res.arrayBuffer();
      await new Promise((r) => setTimeout(r, 100));
      res = await ask();
    }
    expect(res.status, await res.clone().text()).toBe(200);
    await res.arrayBuffer();
    const metrics = new OperatorMetrics();
    metrics.setSnapshotVersion('v-test');
    operator = await startMetricsServer(metrics, { healthy: () => true, ready: () => true }, 0, '127.0.0.1');
    const pages = await Promise.all(
      [`${gateway.metricsUrl}/metrics`, `${operator.url}/metrics`].map(async (u) => (await fetch(u)).text()),
    );
    exported = new Set(pages.flatMap((p) => [...exportedNames(p)]));
    families = new Set(
      pages.flatMap((p) => [...p.matchAll(/^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) /gm)].map((m) => m[1] ?? '')),
    );
  }, 60_000);

  afterAll(async () => {
    await gateway?.close();
    await operator?.close();
    await redis?.stop();
  });

  const panels = (list: Panel[]): Panel[] => list.flatMap((p) => [p, ...panels(p.panels ?? [])]);
  const dashboardExprs = () => [
    ...panels(dashboard.panels).flatMap((p) =>
      (p.targets ?? []).map((t) => ({ where: p.title, expr: t.expr })),
    ),
    ...dashboard.templating.list
      .filter((v) => v.type === 'query')
      .map((v) => ({
        where: `variable ${v.name}`,
        expr: typeof v.query === 'string' ? v.query : (v.query?.query ?? ''),
      })),
  ];

  it('the pages export the standard process_* and nodejs_* names, unprefixed', () => {
    expect(exported.has('switchyard_state_write_buffer_settlements')).toBe(true);
    for (const name of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_p99_seconds',
    ])
      expect(exported.has(name), name).toBe(true);
    expect([...exported].filter((n) => /^switchyard_(gateway|operator)_(process|nodejs)_/.test(n))).toEqual(
      [],
    );
  });

  it('every metric an alert uses is exported', () => {
    const unknown = rules.flatMap((r) =>
      [...metricNames(r.expr)].filter((n) => !exported.has(n)).map((n) => `${r.alert}: ${n}`),
    );
    expect(unknown).toEqual([]);
    expect(new Set(rules.flatMap((r) => [...metricNames(r.expr)])).size).toBeGreaterThanOrEqual(4);
  });

  it('every metric a dashboard panel or variable uses is exported', () => {
    const exprs = dashboardExprs();
    const unknown = exprs.flatMap(({ where, expr }) =>
      [...metricNames(expr)].filter((n) => !exported.has(n)).map((n) => `${where}: ${n}`),
    );
    expect(unknown).toEqual([]);
    expect(exprs.every((e) => metricNames(e.expr).size > 0)).toBe(true);
  });

  // Every Switchyard family the live pages export is on the dashboard: the core ones
  // (GatewayMetrics, OperatorMetrics) and the features' (runtime state, spend caps, cache,
  // sessions, async jobs, webhooks, WebSockets), which the gateway registers at start-up.
  it('every Switchyard metric family the live pages export has a panel', () => {
    const core = [new GatewayMetrics().registry, new OperatorMetrics().registry].flatMap((r) =>
      r.getMetricsAsArray().map((m) => m.name),
    );
    const used = new Set(
      dashboardExprs().flatMap(({ expr }) => [...metricNames(expr)].map((n) => familyOf(n, families))),
    );
    const switchyard = [...families].filter((f) => f.startsWith('switchyard_'));
    expect(core.filter((f) => f.startsWith('switchyard_') && !families.has(f))).toEqual([]);
    for (const feature of [
      'switchyard_spend_cap_used_ratio',
      'switchyard_cache_requests_total',
      'switchyard_sessions_active',
      'switchyard_job_queue_depth',
      'switchyard_webhook_dead_letters_total',
      'switchyard_websocket_connections',
    ])
      expect(families.has(feature), feature).toBe(true);
    expect(switchyard.length).toBeGreaterThanOrEqual(30);
    expect(switchyard.filter((f) => !used.has(f))).toEqual([]);
  });

  it('the name extractor sees through functions, matchers, ranges and label lists', () => {
    expect(
      metricNames(
        'histogram_quantile(0.99, sum by (le, provider) (rate(a_bucket{x=~"b|c", y!="d_total"}[5m]))) / ignoring (v) b > 0.5 unless on (n) absent(c offset 1h)',
      ),
    ).toEqual(new Set(['a_bucket', 'b', 'c']));
    expect(metricNames('label_values(switchyard_snapshot_info{namespace=~"$ns"}, namespace)')).toEqual(
      new Set(['switchyard_snapshot_info']),
    );
  });
});

it('every dashboard panel query is valid PromQL (promtool parses each as a recording rule)', () => {
  const all = (list: Panel[]): Panel[] => list.flatMap((p) => [p, ...all(p.panels ?? [])]);
  // Grafana's variables, replaced by what Grafana would put there.
  const grafana = (expr: string) =>
    expr
      .replaceAll('$__rate_interval', '2m')
      .replaceAll('$__range', '6h')
      .replace(/\$\{?(namespace|job)\}?/g, '.*');
  const exprs = all(dashboard.panels).flatMap((p) => (p.targets ?? []).map((t) => grafana(t.expr)));
  expect(exprs.length).toBeGreaterThan(40);
  const dir = mkdtempSync(join(tmpdir(), 'sy-panels-'));
  try {
    const file = join(dir, 'panels.yaml');
    const recording = exprs.map((expr, i) => ({ record: `dashboard:panel_${i}`, expr }));
    writeFileSync(file, JSON.stringify({ groups: [{ name: 'panels', rules: recording }] }));
    const r = promtool(['check', 'rules', file]);
    expect(r.out).toContain(`SUCCESS: ${exprs.length} rules found`);
    expect(r.code, r.out).toBe(0);
    // The same check refuses a broken query.
    writeFileSync(
      file,
      JSON.stringify({ groups: [{ name: 'p', rules: [{ record: 'x', expr: 'sum by (a (rate(b[5m]))' }] }] }),
    );
    expect(promtool(['check', 'rules', file]).code).not.toBe(0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it('the dashboard has a stable uid and a data source variable', () => {
  expect(dashboard.uid).toBe('switchyard-overview');
  expect(dashboard.templating.list.find((v) => v.name === 'datasource')?.type).toBe('datasource');
});
