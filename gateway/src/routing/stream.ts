import { resultEvents } from '../providers/replay.ts';
import type { ChatRequest, CompletionRequest, StreamEvent } from '../providers/types.ts';
import type { RuntimeSlot } from '../snapshot/runtime.ts';
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
): Promise<OpenedStream> {
  const chain = await runChain(plan, signal, async (slot) => {
    const adapter = adapterFor(plan, slot);
    const source =
      plan.testMode || slot.target.streaming
        ? adapter.stream(slot.target, req, { signal })
        : resultEvents(await adapter.call(slot.target, req, { signal }));
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
  };
}
