import type { FastifyReply } from 'fastify';
import type { Exchange } from '../pipeline/exchange.ts';
import type { PipelineResult } from '../pipeline/result.ts';
import { type MessageContext, type MessagesEvent, MessagesStreamEncoder } from './encode-messages.ts';
import { writeStream } from './stream-out.ts';

/**
 * Writes a streamed Messages answer in Anthropic's events. A failure after the stream started ends
 * it with `event: error` in Anthropic's shape (the SDK raises it), never a silent message_stop.
 */
export function writeMessagesStream(
  reply: FastifyReply,
  ex: Exchange,
  result: Extract<PipelineResult, { kind: 'streaming' }>,
  ctx: MessageContext,
  inputTokens: number,
): Promise<FastifyReply> {
  const enc = new MessagesStreamEncoder(ctx, inputTokens);
  return writeStream(reply, ex, result, (sse) => {
    const send = (events: MessagesEvent[]) => {
      for (const e of events) sse.event(e.event, e.data);
    };
    return {
      // The first event says whether the stream is Claude's own (see MessagesStreamEncoder).
      open: () => undefined,
      event: (ev) => send(enc.next(ev)),
      failed(f) {
        send(enc.failing());
        const error = f.refusal
          ? { type: f.refusal.type, message: f.message, code: f.refusal.code }
          : {
              type: 'api_error',
              message: `The stream failed after it started: ${f.message}`,
              code: 'upstream_error',
            };
        sse.event('error', { type: 'error', error });
      },
      answered: (answer) => send(enc.finish(answer.usage)),
    };
  });
}
