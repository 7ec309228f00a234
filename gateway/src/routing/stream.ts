import { resultEvents } from '../providers/replay.ts';
import type { ChatRequest, CompletionRequest, StreamEvent } from '../providers/types.ts';
import type { RuntimeSlot } from '../snapshot/runtime.ts';
import type { AttemptTrace, ChainTrace } from '../tracing/types.ts';
import { UpstreamError } from '../upstream/errors.ts';
import type { Attempt } from './attempts.ts';
import { type ChainResult, runChain } from './chain.ts';
import { adapterFor, type ExecutionPlan } from './plan.ts';

export type OpenedStream =
  | {
      ok: true;
      slot: RuntimeSlot;
      attempts: Attempt[];
      first: StreamEvent;
      rest: AsyncIterator<StreamEvent>;
      started: number;
      /** The attempt's client span, ended when the stream ends. */
      span: AttemptTrace;
    }
  | Extract<ChainResult<unknown>, { ok: false }>;

/**
 * Opens a stream with failover: slots are tried in order until one yields its first event. From
 * then on the client has bytes, so a later failure is reported in-stream, never retried silently.
 */
export async function openStream(
  plan: ExecutionPlan,
  req: ChatRequest | CompletionRequest,
  signal: AbortSignal,
  trace: ChainTrace,
): Promise<OpenedStream> {
  const chain = await runChain(plan, signal, trace, async (slot, ctx) => {
    const adapter = adapterFor(plan, slot);
    const source =
      plan.testMode || slot.target.streaming
        ? adapter.stream(slot.target, req, ctx)
        : resultEvents(await adapter.call(slot.target, req, ctx));
    const rest = source[Symbol.asyncIterator]();
    const first = await rest.next();
    if (first.done)
      throw new UpstreamError('the provider ended the stream without content', {
        code: 'UPSTREAM_STREAM_CUT',
      });
    return { first: first.value, rest };
  });
  if (!chain.ok) return chain;
  return {
    ok: true,
    slot: chain.slot,
    attempts: chain.attempts,
    first: chain.value.first,
    rest: chain.value.rest,
    started: chain.started,
    span: chain.span,
  };
}
