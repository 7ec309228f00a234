import type { StreamEvent, Usage } from '../providers/types.ts';
import { compatUsage, SYSTEM_FINGERPRINT } from './data.ts';

export interface ChunkContext {
  id: string;
  created: number;
  model: string;
}

/** One `chat.completion.chunk` for a canonical stream event (OpenAI's streaming format on both surfaces). */
export function chunkFor(
  ctx: ChunkContext,
  ev: StreamEvent,
  first: boolean,
): Record<string, unknown> | undefined {
  const base = {
    id: ctx.id,
    object: 'chat.completion.chunk',
    created: ctx.created,
    model: ctx.model,
    system_fingerprint: SYSTEM_FINGERPRINT,
  };
  if (ev.type === 'delta') {
    const delta: Record<string, unknown> = first ? { role: 'assistant' } : {};
    if (ev.content !== undefined) delta.content = ev.content;
    if (ev.tool_calls)
      delta.tool_calls = ev.tool_calls.map((t) => ({
        index: t.index,
        ...(t.id ? { id: t.id, type: 'function' } : {}),
        function: {
          ...(t.name ? { name: t.name } : {}),
          ...(t.arguments !== undefined ? { arguments: t.arguments } : {}),
        },
      }));
    return { ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: null }] };
  }
  if (ev.type === 'finish')
    return { ...base, choices: [{ index: 0, delta: {}, logprobs: null, finish_reason: ev.finish_reason }] };
  return undefined;
}

export const usageChunk = (ctx: ChunkContext, usage: Usage): Record<string, unknown> => ({
  id: ctx.id,
  object: 'chat.completion.chunk',
  created: ctx.created,
  model: ctx.model,
  system_fingerprint: SYSTEM_FINGERPRINT,
  choices: [],
  usage: compatUsage(usage),
});
