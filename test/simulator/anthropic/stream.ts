/**
 * Anthropic streaming: named SSE events in the documented order —
 * message_start, content_block_start, ping, content_block_delta × N (text_delta or input_json_delta),
 * content_block_stop, message_delta (stop_reason, usage.output_tokens), message_stop.
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
  const block = o.block;
  const start =
    block.type === 'text'
      ? { type: 'text', text: '' }
      : { type: 'tool_use', id: block.id, name: block.name, input: {} };
  frames.push(
    eventFrame('content_block_start', { type: 'content_block_start', index: 0, content_block: start }),
  );
  frames.push(eventFrame('ping', { type: 'ping' }));
  const pieces =
    block.type === 'text'
      ? splitChunks(block.text, chunks)
      : splitChunks(JSON.stringify(block.input), chunks);
  for (const piece of pieces) {
    const delta =
      block.type === 'text'
        ? { type: 'text_delta', text: piece }
        : { type: 'input_json_delta', partial_json: piece };
    frames.push(eventFrame('content_block_delta', { type: 'content_block_delta', index: 0, delta }, true));
  }
  frames.push(eventFrame('content_block_stop', { type: 'content_block_stop', index: 0 }));
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
