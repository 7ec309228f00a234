import type { Logger } from 'pino';
import type { GatewayMetrics } from '../observability/metrics.ts';
import type { Exchange } from '../pipeline/exchange.ts';
import type { Prepared } from '../pipeline/prepare.ts';
import type { Completion, PipelineStages } from '../pipeline/stages.ts';
import type { CanonicalResult } from '../providers/types.ts';
import type { RuntimeState } from '../state/types.ts';
import { cacheKey } from './key.ts';
import { cacheMetrics } from './metrics.ts';
import { cacheStoreFor } from './store.ts';

export interface CacheFeatureDeps {
  state: RuntimeState;
  metrics: GatewayMetrics;
  logger: Logger;
  now: () => number;
}

/** Request kinds whose answers are replayable as they are (media answers are not cached). */
const CACHEABLE = new Set(['chat', 'completion', 'embedding']);

interface Pending {
  projectId: string;
  key: string;
  ttlSeconds: number;
}

/** A streamed answer as a result to cache: text only (a stream with tools is not cached). */
function streamedResult(ex: Exchange, p: Prepared, done: Completion): CanonicalResult | undefined {
  if (!done.ok || !('streamedText' in done) || !done.usage) return undefined;
  const model = ex.record.usedModel ?? p.requestedModel;
  if (p.request.kind === 'chat' && !p.request.tools?.length)
    return {
      kind: 'chat',
      id: `chatcmpl-${ex.id}`,
      content: done.streamedText,
      finish_reason: 'stop',
      usage: done.usage,
      model,
    };
  if (p.request.kind === 'completion')
    return {
      kind: 'completion',
      id: `cmpl-${ex.id}`,
      text: done.streamedText,
      finish_reason: 'stop',
      usage: done.usage,
      model,
    };
  return undefined;
}

/**
 * The exact response cache (DESIGN.md "Response cache and sessions") as two pipeline stages:
 * `cacheLookup` answers a hit (cost $0, logged with the cost it saved) and marks every request of a
 * cached workflow hit, miss or bypass; `completed` stores a successful miss. Session workflows,
 * `Cache-Control: no-cache` (lookup skipped, answer stored) and `no-store` (neither) bypass it;
 * provider failures are never stored. Workflows without `responseCache` cost one property read.
 */
export function responseCache(deps: CacheFeatureDeps): Pick<PipelineStages, 'cacheLookup' | 'completed'> {
  const store = cacheStoreFor(deps.state, deps.now);
  const metrics = cacheMetrics(deps.metrics.registry);
  const pending = new WeakMap<Exchange, Pending>();
  let lastWarned = -Infinity;
  const warn = (msg: string, err: unknown) => {
    const now = deps.now();
    if (now - lastWarned < 10_000) return;
    lastWarned = now;
    deps.logger.warn({ msg, err: String(err) });
  };

  const cacheLookup: PipelineStages['cacheLookup'] = async (ex, p) => {
    const wf = p.plan.workflow;
    const ttlSeconds = wf?.config.responseCacheTtlSeconds;
    if (!wf || ttlSeconds === undefined) return undefined;
    const projectId = ex.auth.project.config.id;
    const labels = { project: projectId, workflow: wf.config.name };
    const cc = ex.cacheControl?.toLowerCase();
    const noStore = cc?.includes('no-store') ?? false;
    if (wf.config.sessionMemory.enabled || !CACHEABLE.has(p.request.kind) || noStore) {
      ex.record.cache = 'bypass';
      metrics.requests.inc({ ...labels, result: 'bypass' });
      return undefined;
    }
    const key = cacheKey(projectId, wf, p);
    if (cc?.includes('no-cache')) {
      ex.record.cache = 'bypass';
      metrics.requests.inc({ ...labels, result: 'bypass' });
      pending.set(ex, { projectId, key, ttlSeconds });
      return undefined;
    }
    let entry: Awaited<ReturnType<typeof store.get>>;
    try {
      entry = await store.get(projectId, key);
    } catch (err) {
      // The cache is an optimisation: unreachable, the request goes to the provider and is not stored.
      warn('response cache unavailable: lookups bypassed', err);
      ex.record.cache = 'bypass';
      metrics.requests.inc({ ...labels, result: 'bypass' });
      return undefined;
    }
    if (!entry) {
      ex.record.cache = 'miss';
      metrics.requests.inc({ ...labels, result: 'miss' });
      pending.set(ex, { projectId, key, ttlSeconds });
      return undefined;
    }
    ex.record.cache = 'hit';
    ex.record.costSavedMicros = entry.costMicros;
    metrics.requests.inc({ ...labels, result: 'hit' });
    if (entry.costMicros) metrics.savedUsd.inc(labels, entry.costMicros / 1_000_000);
    return entry.result;
  };

  const completed: PipelineStages['completed'] = (ex, p, done) => {
    const w = pending.get(ex);
    if (!w) return;
    pending.delete(ex);
    if (!done.ok) return;
    const result = 'result' in done ? done.result : streamedResult(ex, p, done);
    if (!result || !CACHEABLE.has(result.kind)) return;
    store
      .set(
        w.projectId,
        w.key,
        {
          result,
          costMicros: ex.record.costMicros ?? null,
          provider: ex.record.usedProvider ?? null,
          model: ex.record.usedModel ?? null,
          storedAt: deps.now(),
        },
        w.ttlSeconds,
      )
      .catch((err: unknown) => warn('response cache store failed', err));
  };

  return { cacheLookup, completed };
}
