import type { Logger } from 'pino';
import { withResponseCache } from './cache/index.ts';
import type { GatewayMetrics } from './observability/metrics.ts';
import { defaultStages, type PipelineStages } from './pipeline/stages.ts';
import { summarySpendVia, withSessionMemory } from './sessions/index.ts';
import { withSpendAndLimits } from './spend/stages.ts';
import type { RuntimeState } from './state/types.ts';

export interface FeatureDeps {
  state: RuntimeState;
  metrics: GatewayMetrics;
  logger: Logger;
  /** Wall clock (tests inject one). */
  now: () => number;
}

/**
 * Where features plug into the request pipeline: each feature replaces the default of the stage it
 * owns (pipeline/stages.ts says which is which). One line per feature.
 */
export function buildStages(deps: FeatureDeps): PipelineStages {
  // Session summaries are calls of their own through the final stages (spend caps): bound once built.
  let final: PipelineStages | undefined;
  let stages: PipelineStages = { ...defaultStages };
  stages = withSessionMemory(stages, { ...deps, summarySpend: summarySpendVia(() => final) });
  stages = withResponseCache(stages, deps);
  final = withSpendAndLimits(stages, deps);
  return final;
}
