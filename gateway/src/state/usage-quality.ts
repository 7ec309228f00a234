/**
 * The quality counters of the usage hour buckets: what every settled request adds beside its usage
 * (errors, cache hits, failovers, and its duration in a small fixed histogram), so the analytics
 * read p50/p95 and error rates from the same hashes, without scanning the request logs.
 *
 * A request adds one histogram field (`l<i>` for an answer, `x<i>` for an error: the error count is
 * the sum of the `x` fields, the settled count the sum of both), plus `h` on a cache hit and `f` on
 * a failover. On the hot path that is one field, two at most, in the usage write the settle already
 * makes.
 */

/** Upper bounds (ms) of the duration buckets; the last bucket is everything above the last bound. */
export const LATENCY_BOUNDS_MS = [
  10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000, 30_000, 60_000,
] as const;
const BUCKETS = LATENCY_BOUNDS_MS.length + 1;

export interface QualityIncrement {
  durationMs: number;
  error: boolean;
  cacheHit: boolean;
  /** More than one slot was tried. */
  failover: boolean;
}

export function latencyBucket(ms: number): number {
  for (let i = 0; i < LATENCY_BOUNDS_MS.length; i++) if (ms <= LATENCY_BOUNDS_MS[i]!) return i;
  return LATENCY_BOUNDS_MS.length;
}

export function forEachQualityField<C>(
  q: QualityIncrement,
  prefix: string,
  add: (ctx: C, field: string, by: number) => void,
  ctx: C,
): void {
  add(ctx, `${prefix}${q.error ? 'x' : 'l'}${latencyBucket(q.durationMs)}`, 1);
  if (q.cacheHit) add(ctx, `${prefix}h`, 1);
  if (q.failover) add(ctx, `${prefix}f`, 1);
}

/** What one row's quality fields add up to while folding. */
export class QualityAcc {
  readonly hist = new Array<number>(BUCKETS).fill(0);
  errors = 0;
  cacheHits = 0;
  failovers = 0;

  /** Adds one field; false when the metric is not a quality metric. */
  add(metric: string, v: number): boolean {
    const kind = metric.charAt(0);
    if (metric === 'h') this.cacheHits += v;
    else if (metric === 'f') this.failovers += v;
    else if ((kind === 'l' || kind === 'x') && metric.length > 1) {
      const i = Number(metric.slice(1));
      if (!Number.isInteger(i) || i < 0 || i >= BUCKETS) return true; // a bucket layout we do not know
      this.hist[i]! += v;
      if (kind === 'x') this.errors += v;
    } else return false;
    return true;
  }

  get settled(): number {
    return this.hist.reduce((a, b) => a + b, 0);
  }
}

/**
 * The duration under which a share `p` (0..1) of the settled requests finished, interpolated inside
 * its bucket (so accurate to the bucket's width); null without requests. Above the last bound the
 * answer is that bound.
 */
export function percentileMs(hist: readonly number[], p: number): number | null {
  const total = hist.reduce((a, b) => a + b, 0);
  if (total === 0) return null;
  const rank = p * total;
  let seen = 0;
  for (let i = 0; i < hist.length; i++) {
    const n = hist[i]!;
    if (n > 0 && seen + n >= rank) {
      const lo = i === 0 ? 0 : LATENCY_BOUNDS_MS[i - 1]!;
      const hi = LATENCY_BOUNDS_MS[i];
      if (hi === undefined) return lo;
      return Math.round(lo + ((rank - seen) / n) * (hi - lo));
    }
    seen += n;
  }
  return LATENCY_BOUNDS_MS[LATENCY_BOUNDS_MS.length - 1]!;
}

/** The quality figures of a usage row (`include=quality`). */
export interface QualityFigures {
  settled_requests: number;
  errors: number;
  cache_hits: number;
  failovers: number;
  latency_p50_ms: number | null;
  latency_p95_ms: number | null;
  /** The duration histogram: counts per bucket, bounds in `LATENCY_BOUNDS_MS` (the last is open). */
  latency_histogram: number[];
}

export function qualityFigures(q: QualityAcc): QualityFigures {
  return {
    settled_requests: q.settled,
    errors: q.errors,
    cache_hits: q.cacheHits,
    failovers: q.failovers,
    latency_p50_ms: percentileMs(q.hist, 0.5),
    latency_p95_ms: percentileMs(q.hist, 0.95),
    latency_histogram: [...q.hist],
  };
}

/** The quality figures of a whole answer (its rows' histograms added); nothing when rows carry none. */
export function qualityTotals(
  rows: readonly Partial<QualityFigures>[],
): QualityFigures | Record<string, never> {
  let acc: QualityAcc | null = null;
  for (const r of rows) {
    if (!r.latency_histogram) continue;
    acc ??= new QualityAcc();
    r.latency_histogram.forEach((n, i) => {
      if (i < acc!.hist.length) acc!.hist[i]! += n;
    });
    acc.errors += r.errors ?? 0;
    acc.cacheHits += r.cache_hits ?? 0;
    acc.failovers += r.failovers ?? 0;
  }
  return acc ? qualityFigures(acc) : {};
}
