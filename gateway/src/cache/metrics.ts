import { Counter, type Registry } from 'prom-client';

export interface CacheMetrics {
  requests: Counter<'project' | 'workflow' | 'result'>;
  savedUsd: Counter<'project' | 'workflow'>;
}

const built = new WeakMap<Registry, CacheMetrics>();

/** Response-cache metrics, registered once per registry. */
export function cacheMetrics(registry: Registry): CacheMetrics {
  const have = built.get(registry);
  if (have) return have;
  const m: CacheMetrics = {
    requests: new Counter({
      name: 'switchyard_cache_requests_total',
      help: 'Requests to workflows with a response cache, by result: hit, miss or bypass.',
      labelNames: ['project', 'workflow', 'result'] as const,
      registers: [registry],
    }),
    savedUsd: new Counter({
      name: 'switchyard_cache_saved_usd_total',
      help: 'What cache hits would have cost at list price (the original call), in USD.',
      labelNames: ['project', 'workflow'] as const,
      registers: [registry],
    }),
  };
  built.set(registry, m);
  return m;
}
