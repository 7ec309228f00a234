import { microsToUsd } from '#contract';
import {
  MAX_USAGE_RANGE_MS,
  type UsageIncrement,
  type UsageQuery,
  UsageRangeError,
  type UsageRow,
} from './types.ts';
import { forEachQualityField, QualityAcc, qualityFigures } from './usage-quality.ts';

/**
 * How usage sits in one hour bucket (a Redis hash, or a Map in memory): one integer counter per
 * `<workflow>␟<provider>␟<model>␟<metric>`, so concurrent gateways add with HINCRBY and never
 * read-modify-write. Both adapters share this encoding and the fold, so they answer alike.
 */
const SEP = '\u001f';
const HOUR_SEC = 3600;
const DAY_SEC = 86_400;

/** One letter per counter, to keep the hash small. */
const METRIC = {
  requests: 'n',
  prompt: 'p',
  completion: 'c',
  total: 't',
  costMicros: 'm',
  unpriced: 'u',
} as const;

const USAGE_METRICS: ReadonlySet<string> = new Set(Object.values(METRIC));

/** Names are free text (a direct request's model); the separator inside one would shift the fields. */
const clean = (s: string): string => (s.includes(SEP) ? s.replaceAll(SEP, '\ufffd') : s);

/**
 * Calls `add(ctx, field, by)` for each counter the increment changes (zeros are skipped). `ctx` is
 * passed through so callers on the hot path need no closure per request.
 */
export function forEachUsageField<C>(
  u: UsageIncrement,
  add: (ctx: C, field: string, by: number) => void,
  ctx: C,
): void {
  const prefix = `${clean(u.workflow)}${SEP}${clean(u.provider)}${SEP}${clean(u.model)}${SEP}`;
  const n = Math.round(u.requests);
  if (n || !u.quality) add(ctx, prefix + METRIC.requests, n);
  if (u.quality) forEachQualityField(u.quality, prefix, add, ctx);
  if (u.prompt_tokens) add(ctx, prefix + METRIC.prompt, Math.round(u.prompt_tokens));
  if (u.completion_tokens) add(ctx, prefix + METRIC.completion, Math.round(u.completion_tokens));
  if (u.total_tokens) add(ctx, prefix + METRIC.total, Math.round(u.total_tokens));
  if (u.cost_micros === null) add(ctx, prefix + METRIC.unpriced, n);
  else if (u.cost_micros) add(ctx, prefix + METRIC.costMicros, Math.round(u.cost_micros));
}

/**
 * The hour buckets (Unix seconds) a query reads: from the hour containing `from` up to the last hour
 * starting before `to`. Refuses empty, reversed, non-finite and too long ranges.
 */
export function usageHours(q: UsageQuery): number[] {
  if (!Number.isFinite(q.from) || !Number.isFinite(q.to))
    throw new UsageRangeError('usage range: from and to must be finite times');
  if (q.to <= q.from) throw new UsageRangeError('usage range: to must be after from');
  if (q.to - q.from > MAX_USAGE_RANGE_MS)
    throw new UsageRangeError(
      `usage range: at most ${MAX_USAGE_RANGE_MS / 86_400_000} days per query (asked ${Math.ceil((q.to - q.from) / 86_400_000)})`,
    );
  const hours: number[] = [];
  for (let h = Math.floor(q.from / 3_600_000) * HOUR_SEC; h * 1000 < q.to; h += HOUR_SEC) hours.push(h);
  return hours;
}

interface Acc {
  period: number;
  workflow: string | null;
  provider: string | null;
  model: string | null;
  n: number;
  p: number;
  c: number;
  t: number;
  m: number;
  u: number;
  /** Some usage metric was seen (a row of quality fields only is left out unless they were asked for). */
  usage: boolean;
  quality: QualityAcc | null;
}

/** Folds hour buckets into rows by groupBy and UTC hour or day, oldest period first. */
export function foldUsage(
  hours: Iterable<readonly [hourStartSec: number, fields: Iterable<readonly [string, string | number]>]>,
  q: Pick<UsageQuery, 'groupBy' | 'granularity' | 'quality'>,
): UsageRow[] {
  const rows = new Map<string, Acc>();
  for (const [hour, fields] of hours) {
    const period = q.granularity === 'hour' ? hour : hour - (hour % DAY_SEC);
    for (const [field, raw] of fields) {
      const parts = field.split(SEP);
      if (parts.length !== 4) continue; // not ours
      const [workflow = '', provider = '', model = '', metric] = parts;
      const byWorkflow = q.groupBy === 'workflow';
      const key = byWorkflow ? `${period}${SEP}${workflow}` : `${period}${SEP}${provider}${SEP}${model}`;
      let acc = rows.get(key);
      if (!acc) {
        acc = {
          period,
          workflow: byWorkflow ? workflow : null,
          provider: byWorkflow ? null : provider,
          model: byWorkflow ? null : model,
          n: 0,
          p: 0,
          c: 0,
          t: 0,
          m: 0,
          u: 0,
          usage: false,
          quality: q.quality ? new QualityAcc() : null,
        };
        rows.set(key, acc);
      }
      const v = Number(raw);
      if (!Number.isFinite(v) || metric === undefined) continue;
      if (acc.quality?.add(metric, v)) continue;
      acc.usage ||= USAGE_METRICS.has(metric);
      switch (metric) {
        case METRIC.requests:
          acc.n += v;
          break;
        case METRIC.prompt:
          acc.p += v;
          break;
        case METRIC.completion:
          acc.c += v;
          break;
        case METRIC.total:
          acc.t += v;
          break;
        case METRIC.costMicros:
          acc.m += v;
          break;
        case METRIC.unpriced:
          acc.u += v;
          break;
      }
    }
  }
  const cmp = (a: string | null, b: string | null) =>
    (a ?? '') < (b ?? '') ? -1 : (a ?? '') > (b ?? '') ? 1 : 0;
  return [...rows.values()]
    .filter((a) => a.usage || (a.quality !== null && a.quality.settled > 0))
    .sort(
      (a, b) =>
        a.period - b.period ||
        cmp(a.workflow, b.workflow) ||
        cmp(a.provider, b.provider) ||
        cmp(a.model, b.model),
    )
    .map((a) => ({
      period_start: new Date(a.period * 1000).toISOString(),
      workflow: a.workflow,
      provider: a.provider,
      model: a.model,
      requests: a.n,
      prompt_tokens: a.p,
      completion_tokens: a.c,
      total_tokens: a.t,
      cost_usd: a.n - a.u > 0 ? microsToUsd(a.m) : null,
      unpriced_requests: a.u,
      ...(a.quality ? qualityFigures(a.quality) : {}),
    }));
}
