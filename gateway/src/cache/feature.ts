import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { Exchange } from '../pipeline/exchange.ts';
import type { Feature, FeatureRun } from '../pipeline/feature.ts';
import type { Prepared } from '../pipeline/prepare.ts';
import type { CanonicalResult } from '../providers/types.ts';
import { cacheKey } from './key.ts';
import { cacheMetrics } from './metrics.ts';
import type { CacheStore } from './types.ts';

export interface CacheFeatureDeps {
  store: CacheStore;
  registry: Registry;
  logger: Logger;
  now: () => number;
}

/**
 * The answer as the cache keeps it: canonical, so a hit is rendered by each surface's translator;
 * a provider's own answer to a native request (ChatResult.native) is not kept.
 */
function canonical(result: CanonicalResult): CanonicalResult {
  if (result.kind !== 'chat' || !result.native) return result;
  const { native: _, ...rest } = result;
  return rest;
}

/** Request kinds whose answers are replayable as they are (media answers are not cached). */
const CACHEABLE = new Set(['chat', 'completion', 'embedding']);

/** The workflow's cache TTL, when the exchange is one the cache serves (an HTTP request or a job). */
const ttlOf = (ex: Exchange, p: Prepared): number | undefined =>
  ex.kind === 'summary' ? undefined : p.plan.workflow?.config.responseCacheTtlSeconds;

/** Whether the cache would look this request up (not a session workflow, a cacheable kind, no no-store). */
// A pinned slot's answer is not the workflow's answer: it neither reads nor fills the cache.
const lookable = (ex: Exchange, p: Prepared): boolean =>
  p.plan.pinnedSlot === undefined &&
  p.plan.workflow?.config.sessionMemory.enabled !== true &&
  CACHEABLE.has(p.request.kind) &&
  !(ex.cacheControl?.toLowerCase().includes('no-store') ?? false);

/**
 * The exact response cache. One exchange's lifecycle: `begin` looks the request up and answers a
 * hit (cost $0, logged with the cost it saved), marking every request of a cached workflow hit,
 * miss or bypass; `finish` stores an answered miss. Session workflows, `Cache-Control: no-cache`
 * (lookup skipped, answer stored) and `no-store` (neither) bypass it; failures are never stored, nor
 * answers whose usage is unknown. Workflows without `responseCache` cost one property read.
 */
export function responseCache(deps: CacheFeatureDeps): Feature {
  const { store } = deps;
  const metrics = cacheMetrics(deps.registry);
  let lastWarned = -Infinity;
  const warn = (msg: string, err: unknown) => {
    const now = deps.now();
    if (now - lastWarned < 10_000) return;
    lastWarned = now;
    deps.logger.warn({ msg, err: String(err) });
  };

  return {
    name: 'response-cache',
    mayAnswer: (ex, p) =>
      ttlOf(ex, p) !== undefined && lookable(ex, p) && !ex.cacheControl?.toLowerCase().includes('no-cache'),

    begin({ ex, p }) {
      const ttlSeconds = ttlOf(ex, p);
      const wf = p.plan.workflow;
      // An async request is looked up when its job runs, not when it is accepted.
      if (!wf || ttlSeconds === undefined || ex.kind === 'accept') return undefined;
      const projectId = ex.auth.project.config.id;
      const labels = { project: projectId, workflow: wf.config.name };
      if (!lookable(ex, p)) {
        metrics.requests.inc({ ...labels, result: 'bypass' });
        return { notes: { cache: 'bypass' }, finish: () => undefined };
      }
      const key = cacheKey(projectId, wf, p);
      const storing: FeatureRun['finish'] = (end) => {
        if (end.kind !== 'answered' || !end.answer.slot || !end.answer.usage) return undefined;
        const { answer } = end;
        if (!CACHEABLE.has(answer.result.kind)) return undefined;
        store
          .set(
            projectId,
            key,
            {
              result: canonical(answer.result),
              costMicros: answer.costMicros,
              provider: answer.slot?.provider ?? null,
              model: answer.slot?.model ?? null,
              storedAt: deps.now(),
            },
            ttlSeconds,
          )
          .catch((err: unknown) => warn('response cache store failed', err));
        return undefined;
      };
      if (ex.cacheControl?.toLowerCase().includes('no-cache')) {
        metrics.requests.inc({ ...labels, result: 'bypass' });
        return { notes: { cache: 'bypass' }, finish: storing };
      }
      return lookup(projectId, key, labels, storing);
    },
  };

  async function lookup(
    projectId: string,
    key: string,
    labels: { project: string; workflow: string },
    storing: FeatureRun['finish'],
  ): Promise<FeatureRun> {
    let entry: Awaited<ReturnType<CacheStore['get']>>;
    try {
      entry = await store.get(projectId, key);
    } catch (err) {
      // The cache is an optimisation: unreachable, the request goes to the provider and is not stored.
      warn('response cache unavailable: lookups bypassed', err);
      metrics.requests.inc({ ...labels, result: 'bypass' });
      return { notes: { cache: 'bypass' }, finish: () => undefined };
    }
    if (!entry) {
      metrics.requests.inc({ ...labels, result: 'miss' });
      return { notes: { cache: 'miss' }, finish: storing };
    }
    metrics.requests.inc({ ...labels, result: 'hit' });
    if (entry.costMicros) metrics.savedUsd.inc(labels, entry.costMicros / 1_000_000);
    return {
      notes: { cache: 'hit', costSavedMicros: entry.costMicros },
      answer: entry.result,
      finish: () => undefined,
    };
  }
}
