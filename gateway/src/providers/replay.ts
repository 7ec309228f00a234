import type { CanonicalResult, StreamEvent } from './types.ts';

/**
 * A finished answer as stream events: tool calls, content (split as the caller likes), finish,
 * usage. Used to serve streamed requests from providers that cannot stream, and by test mode.
 */
export async function* resultEvents(
  result: CanonicalResult,
  split: (text: string) => string[] = (text) => [text],
): AsyncGenerator<StreamEvent> {
  if (result.kind !== 'chat' && result.kind !== 'completion') return;
  if (result.kind === 'chat' && result.tool_calls?.length)
    yield {
      type: 'delta',
      tool_calls: result.tool_calls.map((c, index) => ({
        index,
        id: c.id,
        name: c.function.name,
        arguments: c.function.arguments,
      })),
    };
  const text = result.kind === 'chat' ? result.content : result.text;
  if (text) for (const piece of split(text)) yield { type: 'delta', content: piece };
  yield {
    type: 'finish',
    finish_reason: result.finish_reason,
    ...(result.kind === 'chat' && result.stop_sequence !== undefined
      ? { stop_sequence: result.stop_sequence }
      : {}),
  };
  yield { type: 'usage', usage: result.usage };
}
