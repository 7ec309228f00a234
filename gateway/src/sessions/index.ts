import { bothDurable, type PipelineStages } from '../pipeline/stages.ts';
import { type SessionFeatureDeps, sessionMemory } from './stage.ts';

export { sessionWorkDone } from './stage.ts';

export { sessionStoreFor } from './store.ts';
export { summarySpendVia } from './summary-spend.ts';
export type { SessionData, SessionStore } from './types.ts';

/** Session memory on top of `inner`: replaces the session stage, adds its append to `completed`. */
export function withSessionMemory(inner: PipelineStages, deps: SessionFeatureDeps): PipelineStages {
  const s = sessionMemory(deps);
  return {
    ...inner,
    session: s.session,
    completed: (ex, p, done) => bothDurable(s.completed(ex, p, done), inner.completed(ex, p, done)),
  };
}
