/**
 * Anthropic streaming: named SSE events in the documented order —
 * message_start, then per block content_block_start (a ping after the first), content_block_delta × N
 * (thinking_delta and one signature_delta, text_delta, or input_json_delta; a redacted_thinking
 * block has none), content_block_stop; then message_delta (stop_reason, stop_sequence,
 * usage.output_tokens), message_stop.
 */
import { splitChunks } from '../generate.ts';
import { eventFrame, type Frame } from '../sse.ts';
import { type MessageOutcome, usageOf } from './shapes.ts';

export function messageFrames(o: MessageOutcome, chunks: number): Frame[] {
  const frames: Frame[] = [
    eventFrame('message_start', {
      type: 'message_start',
      message: {
        id: o.id,
        type: 'message',
        role: 'assistant',
        model: o.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: usageOf(o, 1),
      },
    }),
  ];
  o.blocks.forEach((block, index) => {
    const start =
      block.type === 'text'
        ? { type: 'text', text: '' }
        : block.type === 'tool_use'
          ? { type: 'tool_use', id: block.id, name: block.name, input: {}, caller: block.caller }
          : block.type === 'thinking'
            ? { type: 'thinking', thinking: '', signature: '' }
            : block;
    frames.push(
      eventFrame('content_block_start', { type: 'content_block_start', index, content_block: start }),
    );
    if (index === 0) frames.push(eventFrame('ping', { type: 'ping' }));
    const deltas: Record<string, unknown>[] =
      block.type === 'text'
        ? splitChunks(block.text, chunks).map((text) => ({ type: 'text_delta', text }))
        : block.type === 'tool_use'
          ? splitChunks(JSON.stringify(block.input), chunks).map((partial_json) => ({
              type: 'input_json_delta',
              partial_json,
            }))
          : block.type === 'thinking'
            ? [
                ...splitChunks(block.thinking, chunks).map((thinking) => ({
                  type: 'thinking_delta',
                  thinking,
                })),
                { type: 'signature_delta', signature: block.signature },
              ]
            : [];
    for (const delta of deltas)
      frames.push(eventFrame('content_block_delta', { type: 'content_block_delta', index, delta }, true));
    frames.push(eventFrame('content_block_stop', { type: 'content_block_stop', index }));
  });
  frames.push(
    eventFrame('message_delta', {
      type: 'message_delta',
      delta: { stop_reason: o.stopReason, stop_sequence: o.stopSequence },
      usage: { output_tokens: o.outputTokens },
    }),
  );
  frames.push(eventFrame('message_stop', { type: 'message_stop' }));
  return frames;
}
