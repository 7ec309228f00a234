import type { GatewayError } from '../errors/index.ts';
import type { RequestRecord } from '../observability/request-record.ts';
import type { CanonicalResult, Usage } from '../providers/types.ts';
import { usageOf } from '../responses/data.ts';
import type { Attempt } from '../routing/attempts.ts';
import type { RuntimeSlot } from '../snapshot/runtime.ts';
import type { UpstreamError } from '../upstream/errors.ts';
import { costMicros } from './cost.ts';
import type { StreamEnd } from './outcome.ts';
import type { Prepared } from './prepare.ts';

/**
 * The one place the pipeline's results are copied into the request record. Surfaces and encoders
 * never write the record; the error encoder (http/errors.ts) records refusals.
 */

export function describePrepared(r: RequestRecord, p: Prepared, stream: boolean): void {
  r.workflow = p.workflowName;
  r.customerData = p.customerData;
  r.testMode = p.plan.testMode;
  if (stream) r.stream = true;
}

/** The provider-reported usage of a result, when it has one (speech results have none). */
export const canonicalUsage = (result: CanonicalResult): Usage | undefined =>
  'usage' in result ? result.usage : undefined;

/** Test mode and cache hits cost nothing; otherwise the used slot's list price, or unknown. */
function cost(
  p: { testMode: boolean },
  slot: RuntimeSlot | undefined,
  usage: Usage | undefined,
  result?: CanonicalResult,
) {
  if (p.testMode || !slot) return 0;
  return costMicros({ usage, result }, slot.pricing);
}

export function describeResult(
  r: RequestRecord,
  p: Prepared,
  slot: RuntimeSlot | undefined,
  result: CanonicalResult,
  attempts: Attempt[],
): void {
  const usage = usageOf(result);
  r.attempts = attempts;
  r.usedProvider = slot?.provider ?? null;
  r.usedModel = slot?.model ?? null;
  r.usage = usage;
  r.costMicros = cost(p.plan, slot, canonicalUsage(result), result);
  r.outcome = 'success';
  if (r.bodies) r.bodies.response = result.kind === 'speech' ? { format: result.format } : result;
}

/** A request refused with a GatewayError: rate-limit and budget refusals are outcomes of their own. */
export function describeRefusal(r: RequestRecord, ge: GatewayError): void {
  r.outcome =
    ge.status >= 500
      ? 'unavailable'
      : ge.code === 'rate_limit_exceeded'
        ? 'rate_limited'
        : ge.status === 402
          ? 'budget_exceeded'
          : 'client_error';
  r.errorCode = ge.code;
}

export function describeFailure(r: RequestRecord, error: UpstreamError, attempts: Attempt[]): void {
  r.attempts = attempts;
  r.outcome = 'upstream_error';
  r.errorCode = error.code;
}

export function describeStreamStart(r: RequestRecord, slot: RuntimeSlot, attempts: Attempt[]): void {
  r.attempts = attempts;
  r.usedProvider = slot.provider;
  r.usedModel = slot.model;
}

export function describeStreamEnd(
  r: RequestRecord,
  p: Prepared,
  slot: RuntimeSlot,
  end: StreamEnd,
  usage: Usage | undefined,
  text: string,
): void {
  if (usage) {
    r.usage = { ...usage };
    r.costMicros = cost(p.plan, slot, usage);
  } else r.costMicros = p.plan.testMode ? 0 : null;
  if (r.bodies) r.bodies.response = { content: text };
  if (end.ok) r.outcome = 'success';
  else {
    r.outcome = end.aborted ? 'aborted' : 'stream_error';
    r.errorCode = end.code;
  }
}
