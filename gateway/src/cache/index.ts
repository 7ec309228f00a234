import type { PipelineStages } from '../pipeline/stages.ts';
import { type CacheFeatureDeps, responseCache } from './stage.ts';

export { cacheStoreFor } from './store.ts';

/** The response cache on top of `inner`: replaces the lookup stage, adds its store to `completed`. */
export function withResponseCache(inner: PipelineStages, deps: CacheFeatureDeps): PipelineStages {
  const c = responseCache(deps);
  return {
    ...inner,
    cacheLookup: c.cacheLookup,
    completed: (ex, p, done) => {
      c.completed(ex, p, done);
      return inner.completed(ex, p, done);
    },
  };
}
