import type { CallContext } from '../providers/types.ts';
import type { RuntimeSlot } from '../snapshot/runtime.ts';
import type { AttemptTrace, ChainTrace } from '../tracing/types.ts';
import { UpstreamError } from '../upstream/errors.ts';
import type { Attempt } from './attempts.ts';
import type { ExecutionPlan } from './plan.ts';

export type ChainResult<T> =
  | { ok: true; value: T; slot: RuntimeSlot; attempts: Attempt[]; started: number; span: AttemptTrace }
  | { ok: false; error: UpstreamError; attempts: Attempt[]; allSkipped: boolean };

export const toUpstreamError = (err: unknown): UpstreamError =>
  err instanceof UpstreamError
    ? err
    : new UpstreamError(`internal error calling the provider: ${(err as Error)?.message ?? String(err)}`, {
        code: 'UPSTREAM_BAD_RESPONSE',
        cause: err,
      });

const errorAttempt = (slot: RuntimeSlot, e: UpstreamError, started: number): Attempt => ({
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
const movesOn = (e: UpstreamError): boolean => e.retryable || e.code === 'UPSTREAM_UNSUPPORTED';

/**
 * The failover chain shared by plain and streamed requests: primary, then backups in order; a slot
 * the guard refuses is `skipped`; retryable failures (429, 5xx, timeouts, connection errors,
 * answers off the schema) move on; a provider 4xx for the input stops the chain.
 *
 * Each call is a client span of `trace`; a failed one is ended here, the one that answered is
 * handed back (`span`) to be ended with its answer (a stream's when the stream ends).
 */
export async function runChain<T>(
  plan: ExecutionPlan,
  signal: AbortSignal,
  trace: ChainTrace,
  tryOne: (slot: RuntimeSlot, ctx: CallContext) => Promise<T>,
): Promise<ChainResult<T>> {
  const attempts: Attempt[] = [];
  let last: UpstreamError | undefined;
  let called = 0;
  for (const slot of plan.slots) {
    if (plan.guard?.check) {
      const verdict = await plan.guard.check(slot);
      if (verdict.skip) {
        trace.skipped(slot, verdict.message);
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
    const span = trace.attempt(slot);
    try {
      const value = await tryOne(slot, { signal, trace: span.context });
      attempts.push({
        provider: slot.provider,
        model: slot.model,
        status: 'success',
        duration_ms: Math.round(performance.now() - started),
      });
      return { ok: true, value, slot, attempts, started, span };
    } catch (err) {
      last = toUpstreamError(err);
      span.failed(last);
      plan.guard?.release?.(slot);
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
      }),
    attempts,
    allSkipped: called === 0,
  };
}
