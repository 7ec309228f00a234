import { GatewayError, InternalError } from '../errors/index.ts';
import type { CallContext } from '../providers/types.ts';
import type { RuntimeSlot } from '../snapshot/runtime.ts';
import type { AttemptTrace, ChainTrace } from '../tracing/types.ts';
import { UpstreamError } from '../upstream/errors.ts';
import type { Attempt } from './attempts.ts';
import type { ExecutionPlan } from './plan.ts';

export type ChainResult<T> =
  | { ok: true; value: T; slot: RuntimeSlot; attempts: Attempt[]; started: number; span: AttemptTrace }
  | {
      ok: false;
      error: UpstreamError;
      attempts: Attempt[];
      allSkipped: boolean;
      /**
       * The chain stopped on a failure that is not the provider's: a refusal of the request found
       * inside an attempt (a GatewayError), or the gateway's own exception (an InternalError).
       * Answered as that error, never as upstream_error, and no backup is tried for it.
       */
      refusal?: GatewayError;
    };

/**
 * What an exception thrown inside an attempt is. Adapters and the transport raise UpstreamError
 * for everything the provider did (statuses, timeouts, connection failures, unusable answers); a
 * GatewayError is a refusal of the request; anything else is the gateway's own failure (building
 * the provider request, reading its answer), which a backup would only repeat.
 */
export const attemptFailure = (err: unknown): UpstreamError | GatewayError =>
  err instanceof UpstreamError || err instanceof GatewayError ? err : new InternalError(err);

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

/** The attempt during which the gateway refused the request or failed itself: no provider fault in it. */
const refusedAttempt = (slot: RuntimeSlot, e: GatewayError, started: number): Attempt => ({
  provider: slot.provider,
  model: slot.model,
  status: 'error',
  reason: { message: e.message, code: e.code },
  duration_ms: Math.round(performance.now() - started),
});

/**
 * Every slot that was tried refused the request before sending it (a parameter or content its
 * provider cannot take): nothing failed at a provider, so the client is told what to change.
 */
function nothingCanServe(attempts: Attempt[], last: UpstreamError): GatewayError {
  const reasons = attempts.filter((a) => a.status === 'error').map((a) => a.reason?.message ?? '');
  const message = `No provider of this workflow can serve the request: ${[...new Set(reasons)].join('; ')}.`;
  return last.param
    ? new GatewayError('unsupported_parameter', message, { param: last.param })
    : new GatewayError('invalid_request', message);
}

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
  let refusal: GatewayError | undefined;
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
      plan.guard?.release?.(slot);
      const failure = attemptFailure(err);
      span.failed(failure);
      if (failure instanceof GatewayError) {
        refusal = failure;
        attempts.push(refusedAttempt(slot, failure, started));
        break;
      }
      last = failure;
      attempts.push(errorAttempt(slot, last, started));
      if (signal.aborted || !movesOn(last)) break;
    }
  }
  if (
    !refusal &&
    last &&
    attempts.every((a) => a.status !== 'error' || a.reason?.code === 'UPSTREAM_UNSUPPORTED')
  )
    refusal = nothingCanServe(attempts, last);
  return {
    ok: false,
    error:
      last ??
      new UpstreamError(refusal ? refusal.message : 'every slot of the failover chain was skipped', {
        code: 'UPSTREAM_UNSUPPORTED',
      }),
    attempts,
    allSkipped: called === 0,
    ...(refusal ? { refusal } : {}),
  };
}
