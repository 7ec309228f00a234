import type { RequestType } from '#contract';
import { getAdapter } from '../providers/registry.ts';
import { testModeAdapter } from '../providers/testmode/index.ts';
import type { ProviderAdapter, StructuredOutput } from '../providers/types.ts';
import type { RuntimeSlot, RuntimeWorkflow } from '../snapshot/runtime.ts';

/** A hook that may take a slot out of the chain before it is called (spend caps plug in here). */
export interface SlotGuard {
  check(slot: RuntimeSlot): Promise<{ skip: false } | { skip: true; message: string }>;
}

/** Everything the failover engine needs, independent of which API surface asked. */
export interface ExecutionPlan {
  workflow: RuntimeWorkflow | undefined;
  requestType: RequestType;
  slots: RuntimeSlot[];
  testMode: boolean;
  structured: StructuredOutput | undefined;
  /** Expect JSON without a schema (`response_format: {type: json_object}`). */
  json: boolean;
  guard?: SlotGuard | undefined;
}

type Adapter = Pick<ProviderAdapter, 'call' | 'stream' | 'supports'>;

export const adapterFor = (plan: ExecutionPlan, slot: RuntimeSlot): Adapter =>
  plan.testMode ? testModeAdapter : getAdapter(slot.target.type);
