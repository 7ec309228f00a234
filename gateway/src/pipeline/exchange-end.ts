import type { RequestRecord } from '../observability/request-record.ts';
import type { RuntimeSlot } from '../snapshot/runtime.ts';
import type { ExchangeEnd } from '../tracing/types.ts';
import type { Finished } from './finished.ts';

/** The slot that answered (or whose stream broke), else the first the chain would try. */
function slotOf(f: Finished): RuntimeSlot | undefined {
  const res = f.result;
  if (res?.kind === 'answered' && res.answer.slot) return res.answer.slot;
  if (res?.kind === 'failed' && res.failure.slot) return res.failure.slot;
  return f.prepared?.plan.slots[0];
}

/** How a finished exchange ended, in the values its span records (tracing reads nothing else). */
export function exchangeEndOf(f: Finished, record: RequestRecord): ExchangeEnd {
  const p = f.prepared;
  const used = f.result?.kind === 'answered' ? f.result.answer.slot : undefined;
  return {
    id: f.id,
    status: f.httpStatus,
    http: f.method !== null,
    request: p && {
      kind: p.request.kind,
      model: p.requestedModel,
      stream: f.stream,
      endpoint: slotOf(f)?.target,
    },
    slot: used?.slot,
    figures: record,
  };
}

/** Ends the exchange's span. With tracing off (no trace id) its figures are not even gathered. */
export function endTrace(f: Finished, record: RequestRecord): void {
  if (f.trace.traceId === null) return;
  f.trace.end(exchangeEndOf(f, record));
}
