import { reportedUsage } from '../domain/usage.ts';
import type { CanonicalRequest, CanonicalResult } from '../providers/types.ts';
import type { RuntimeSlot } from '../snapshot/runtime.ts';
import { checkStructured } from '../structured/validate.ts';
import type { ChainTrace } from '../tracing/types.ts';
import { UpstreamError } from '../upstream/errors.ts';
import type { Attempt } from './attempts.ts';
import { type ChainResult, runChain } from './chain.ts';
import { adapterFor, type ExecutionPlan } from './plan.ts';

export { attemptFailure } from './chain.ts';

/** How one request through the failover chain ended. */
export type ChainOutcome =
  | { ok: true; result: CanonicalResult; slot: RuntimeSlot; attempts: Attempt[]; structured: unknown }
  | Extract<ChainResult<unknown>, { ok: false }>;

type StructuredCheck = ReturnType<typeof checkStructured> | undefined;

/** The structured-output check of a result, when the plan asks for one (answers that call tools are not checked). */
function checkOf(plan: ExecutionPlan, result: CanonicalResult): StructuredCheck {
  if (!plan.structured && !plan.json) return undefined;
  if (result.kind === 'chat' && result.tool_calls?.length) return undefined;
  const text = result.kind === 'chat' ? result.content : result.kind === 'completion' ? result.text : null;
  return checkStructured(text, plan.structured?.schema);
}

/** The structured-output value of an answer that passed its check before (a cached one). */
export function structuredValue(plan: ExecutionPlan, result: CanonicalResult): unknown {
  const check = checkOf(plan, result);
  return check?.ok ? check.value : undefined;
}

/** Structured output is checked here, so a provider that answers off-schema fails over like any other failure. */
function verifyStructured(plan: ExecutionPlan, result: CanonicalResult): unknown {
  const check = checkOf(plan, result);
  if (!check) return undefined;
  if (!check.ok)
    throw new UpstreamError(check.message, {
      code: 'UPSTREAM_BAD_RESPONSE',
      providerMessage: check.message,
    });
  return check.value;
}

/** One request through the failover chain; structured output is verified inside the attempt. */
export async function execute(
  plan: ExecutionPlan,
  req: CanonicalRequest,
  signal: AbortSignal,
  trace: ChainTrace,
): Promise<ChainOutcome> {
  const chain = await runChain(plan, signal, trace, async (slot, ctx) => {
    const result = await adapterFor(plan, slot).call(slot.target, req, ctx);
    return { result, structured: verifyStructured(plan, result) };
  });
  if (!chain.ok) return chain;
  chain.span.answered(chain.value.result, reportedUsage(chain.value.result));
  return {
    ok: true,
    result: chain.value.result,
    structured: chain.value.structured,
    slot: chain.slot,
    attempts: chain.attempts,
  };
}
