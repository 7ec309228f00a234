import { api } from '../api.ts';
import { fmt, LineChart, type Series } from '../chart.tsx';
import { Choice, FilterForm, valuesOf } from '../filters.tsx';
import { useLoad } from '../load.ts';
import type { Route } from '../route.ts';
import { Heading, Pending, text } from '../ui.tsx';

interface UsageRow {
  period_start: string;
  workflow: string | null;
  provider: string | null;
  model: string | null;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost_usd: string | null;
  unpriced_requests: number;
  settled_requests?: number;
  errors?: number;
  cache_hits?: number;
  failovers?: number;
  latency_p50_ms?: number | null;
  latency_p95_ms?: number | null;
  latency_histogram?: number[];
}

interface Usage {
  from: string;
  to: string;
  data: UsageRow[];
  totals: Omit<UsageRow, 'period_start' | 'workflow' | 'provider' | 'model'>;
}

const FILTERS = ['range', 'granularity', 'group_by'] as const;
const RANGES: Record<string, number> = { '24h': 24, '7d': 24 * 7, '30d': 24 * 30, '90d': 24 * 90 };
const HOUR = 3_600_000;
const METRICS = [
  ['requests', 'Requests'],
  ['total_tokens', 'Tokens'],
  ['cost', 'Cost (USD)'],
  ['errors', 'Errors'],
  ['cache_hits', 'Cache hits'],
  ['failovers', 'Failovers'],
  ['latency_p50_ms', 'Latency p50 (ms)'],
  ['latency_p95_ms', 'Latency p95 (ms)'],
] as const;
type Metric = (typeof METRICS)[number][0];
const LATENCY: ReadonlySet<Metric> = new Set(['latency_p50_ms', 'latency_p95_ms']);
/** The duration buckets' upper bounds (ms) the gateway counts in; the last bucket is open. */
const BOUNDS = [10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000, 60_000];

// Requests refused before any provider (counted in the quality figures) have no provider/model.
const groupOf = (r: UsageRow): string =>
  r.workflow !== null ? r.workflow : r.provider ? `${r.provider}/${r.model}` : '(no provider)';
const metricOf = (r: UsageRow, m: Metric): number => (m === 'cost' ? Number(r.cost_usd ?? 0) : (r[m] ?? 0));

/** A percentile of added histograms, as the gateway computes it for one row. */
function percentile(hist: number[], p: number): number {
  const total = hist.reduce((a, b) => a + b, 0);
  let seen = 0;
  for (let i = 0; i < hist.length && total > 0; i++) {
    const n = hist[i]!;
    if (n > 0 && seen + n >= p * total) {
      const lo = i === 0 ? 0 : BOUNDS[i - 1]!;
      const hi = BOUNDS[i];
      return hi === undefined ? lo : Math.round(lo + ((p * total - seen) / n) * (hi - lo));
    }
    seen += n;
  }
  return 0;
}

/** Every period of the range, so a quiet hour is a zero, not a gap the line jumps over. */
function periodsOf(from: number, to: number, step: number): string[] {
  const out: string[] = [];
  for (let t = Math.floor(from / step) * step; t < to; t += step) out.push(new Date(t).toISOString());
  return out;
}

export function Analytics({ route }: { route: Route }) {
  const f = valuesOf(route, FILTERS);
  const range = f.range && RANGES[f.range] ? f.range : '24h';
  const granularity = f.granularity === 'day' ? 'day' : 'hour';
  const groupBy = f.group_by === 'model' ? 'model' : 'workflow';
  const key = `${range}/${granularity}/${groupBy}`;
  const loaded = useLoad(key, async () => {
    // Whole hours, so the page asks the same question for the whole hour (and the server's buckets align).
    const to = Math.ceil(Date.now() / HOUR) * HOUR;
    const from = to - RANGES[range]! * HOUR;
    const usage = await api<Usage>(
      `v1/usage?from=${from}&to=${to}&granularity=${granularity}&group_by=${groupBy}&include=quality`,
    );
    return { usage, periods: periodsOf(from, to, granularity === 'day' ? 24 * HOUR : HOUR) };
  });
  return (
    <main id="main">
      <Heading>Analytics</Heading>
      <FilterForm page="analytics" names={FILTERS}>
        <Choice label="Range" name="range" value={f.range} options={Object.keys(RANGES)} />
        <Choice label="Granularity" name="granularity" value={f.granularity} options={['hour', 'day']} />
        <Choice label="Group by" name="group_by" value={f.group_by} options={['workflow', 'model']} />
      </FilterForm>
      <Pending loaded={loaded}>
        {({ usage, periods }) => {
          const groups = [...new Set(usage.data.map(groupOf))].sort();
          const index = new Map(periods.map((p, i) => [p, i]));
          const seriesOf = (m: Metric): Series[] =>
            groups.map((g) => {
              const values = periods.map(() => 0);
              for (const r of usage.data) {
                const i = index.get(r.period_start);
                if (i !== undefined && groupOf(r) === g) values[i]! += metricOf(r, m);
              }
              return { name: g, values };
            });
          const series = Object.fromEntries(METRICS.map(([m]) => [m, seriesOf(m)]));
          const total = (m: Metric, g: string): number => {
            if (!LATENCY.has(m))
              return series[m]!.find((s) => s.name === g)!.values.reduce((a, b) => a + b, 0);
            const hist: number[] = [];
            for (const r of usage.data)
              if (groupOf(r) === g)
                for (const [i, n] of (r.latency_histogram ?? []).entries()) hist[i] = (hist[i] ?? 0) + n;
            return percentile(hist, m === 'latency_p50_ms' ? 0.5 : 0.95);
          };
          return (
            <>
              <p>
                {usage.from} to {usage.to}: {usage.totals.requests} requests, {usage.totals.total_tokens}{' '}
                tokens, ${text(usage.totals.cost_usd)}
                {usage.totals.unpriced_requests > 0 && ` (${usage.totals.unpriced_requests} without pricing)`}
                . Counted as requests settle: requests, tokens and cost of the requests that reached a
                provider and came back with usage; errors, cache hits, failovers and latency of every request
                (settled: {usage.totals.settled_requests ?? 0}, errors: {usage.totals.errors ?? 0}).
              </p>
              {groups.length === 0 ? (
                <p>No usage in this range.</p>
              ) : (
                <>
                  <div class="charts">
                    {METRICS.map(([m, title]) => (
                      <LineChart
                        key={m}
                        title={`${title} per ${granularity} by ${groupBy}`}
                        series={series[m]!}
                        periods={periods}
                      />
                    ))}
                  </div>
                  <table>
                    <caption>Totals by {groupBy} over the range</caption>
                    <thead>
                      <tr>
                        <th scope="col">{groupBy === 'workflow' ? 'Workflow' : 'Provider/model'}</th>
                        {METRICS.map(([m, title]) => (
                          <th key={m} scope="col">
                            {title}
                          </th>
                        ))}
                      </tr>
                    </thead>
                    <tbody>
                      {groups.map((g) => (
                        <tr key={g}>
                          <td>{g || '(direct)'}</td>
                          {METRICS.map(([m]) => (
                            <td key={m}>{fmt(total(m, g))}</td>
                          ))}
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </>
              )}
            </>
          );
        }}
      </Pending>
    </main>
  );
}
