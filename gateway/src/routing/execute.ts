import type { CanonicalRequest, CanonicalResult } from '../providers/types.ts';
import type { RuntimeSlot } from '../snapshot/runtime.ts';
import { checkStructured } from '../structured/validate.ts';
import { UpstreamError } from '../upstream/errors.ts';
import type { Attempt } from './attempts.ts';
import { adapterFor, type ExecutionPlan } from './plan.ts';

export type Outcome =
  | { ok: true; result: CanonicalResult; slot: RuntimeSlot; attempts: Attempt[]; structured: unknown }
  | { ok: false; error: UpstreamError; attempts: Attempt[]; allSkipped: boolean };

export const toUpstreamError = (err: unknown): UpstreamError =>
  err instanceof UpstreamError
    ? err
    : new UpstreamError(`internal error calling the provider: ${(err as Error)?.message ?? String(err)}`, {
        code: 'UPSTREAM_BAD_RESPONSE',
        status: 502,
        retryable: true,
        cause: err,
      });

export const errorAttempt = (slot: RuntimeSlot, e: UpstreamError, started: number): Attempt => ({
  provider: slot.provider,
  model: slot.model,
  status: 'error',
  reason: {
    message: e.providerMessage || e.message,
    ...(e.status !== undefined ? { status: e.status } : {}),
    code: e.code,
  },
  duration_ms: Math.round(performance.now() - started),
});

/** Whether to try the next slot after this failure. Unsupported means "this slot can't", not "the input is bad". */
export const movesOn = (e: UpstreamError): boolean => e.retryable || e.code === 'UPSTREAM_UNSUPPORTED';

/** Structured output is checked here, so a provider that answers off-schema fails over like any other failure. */
function verifyStructured(plan: ExecutionPlan, result: CanonicalResult): unknown {
  if (!plan.structured && !plan.json) return undefined;
  const text = result.kind === 'chat' ? result.content : result.kind === 'completion' ? result.text : null;
  if (result.kind === 'chat' && result.tool_calls?.length) return undefined;
  const check = checkStructured(text, plan.structured?.schema);
  if (!check.ok)
    throw new UpstreamError(check.message, {
      code: 'UPSTREAM_BAD_RESPONSE',
      status: 502,
      retryable: true,
      providerMessage: check.message,
    });
  return check.value;
}

/**
 * Primary, then backups in order. Retryable failures (429, 5xx, timeouts, connection errors,
 * answers off the schema) move on; a provider 4xx for the input stops the chain.
 */
export async function execute(
  plan: ExecutionPlan,
  req: CanonicalRequest,
  signal: AbortSignal,
): Promise<Outcome> {
  const attempts: Attempt[] = [];
  let last: UpstreamError | undefined;
  let called = 0;
  for (const slot of plan.slots) {
    if (plan.guard) {
      const verdict = await plan.guard.check(slot);
      if (verdict.skip) {
        attempts.push({
          provider: slot.provider,
          model: slot.model,
          status: 'skipped',
          reason: { message: verdict.message },
        });
        continue;
      }
    }
    const started = performance.now();
    called++;
    try {
      const adapter = adapterFor(plan, slot);
      const result = await adapter.call(slot.target, req, { signal });
      const structured = verifyStructured(plan, result);
      attempts.push({
        provider: slot.provider,
        model: slot.model,
        status: 'success',
        duration_ms: Math.round(performance.now() - started),
      });
      return { ok: true, result, slot, attempts, structured };
    } catch (err) {
      last = toUpstreamError(err);
      attempts.push(errorAttempt(slot, last, started));
      if (signal.aborted || !movesOn(last)) break;
    }
  }
  return {
    ok: false,
    error:
      last ??
      new UpstreamError('every slot of the failover chain was skipped', {
        code: 'UPSTREAM_UNSUPPORTED',
        retryable: false,
        status: 502,
      }),
    attempts,
    allSkipped: called === 0,
  };
}
