import type { RequestType } from '#contract';
import { getAdapter } from '../providers/registry.ts';
import { testModeAdapter } from '../providers/testmode/index.ts';
import type { NativeDialect, ProviderAdapter, StructuredOutput } from '../providers/types.ts';
import type { RuntimeSlot, RuntimeWorkflow } from '../snapshot/runtime.ts';

/**
 * A feature's hook around each slot of the failover chain (spend caps plug in here): `check` may
 * take a slot out before it is called (a reservation is made there); `release` gives back what a
 * slot that failed had reserved. The slot that answers is settled when the exchange finishes.
 */
export interface SlotGuard {
  check?(slot: RuntimeSlot): Promise<{ skip: false } | { skip: true; message: string }>;
  release?(slot: RuntimeSlot): void;
  /** For a stream on `slot`: how much output its reservation covers, and how to extend it. */
  stream?(slot: RuntimeSlot): StreamBudget | undefined;
}

/** A stream's spend reservation: output tokens covered so far, and a further block or a refusal. */
export interface StreamBudget {
  outputTokens: number;
  extend(): Promise<{ ok: true; outputTokens: number } | { ok: false; code: string; message: string }>;
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
  /** The console's compare pinned the request to this slot of its workflow (0 the primary): no failover, no cache. */
  pinnedSlot?: number | undefined;
}

type Adapter = Pick<ProviderAdapter, 'call' | 'stream' | 'supports'>;

export const adapterFor = (plan: ExecutionPlan, slot: RuntimeSlot): Adapter =>
  plan.testMode ? testModeAdapter : getAdapter(slot.target.type);

/** Whether some slot would be sent a request of this dialect as written (never in test mode). */
export const speaksDialect = (
  testMode: boolean,
  slots: readonly RuntimeSlot[],
  dialect: NativeDialect,
): boolean => !testMode && slots.some((s) => getAdapter(s.target.type).speaks?.(dialect, s.target) === true);
