import type { FastifyReply } from 'fastify';
import type { Exchange } from '../pipeline/exchange.ts';
import type { Outcome } from '../pipeline/outcome.ts';
import { type MessagesEvent, MessagesStreamEncoder } from './encode-messages.ts';
import { serviceHeaders } from './meta.ts';
import { SseWriter } from './sse.ts';

/**
 * Writes a streamed Messages answer in Anthropic's events. A failure after the stream started ends
 * it with `event: error` in Anthropic's shape (the SDK raises it), never a silent message_stop.
 */
export async function writeMessagesStream(
  reply: FastifyReply,
  ex: Exchange,
  outcome: Extract<Outcome, { kind: 'streaming' }>,
  id: string,
  model: string,
  inputTokens: number,
): Promise<FastifyReply> {
  reply.hijack();
  const sse = new SseWriter(reply.raw, serviceHeaders(ex, outcome, { duration: false }));
  const enc = new MessagesStreamEncoder(id, model);
  const send = (events: MessagesEvent[]) => {
    for (const e of events) sse.event(e.event, e.data);
  };
  send(enc.start(inputTokens));
  let step = await outcome.events.next();
  while (!step.done) {
    send(enc.next(step.value));
    step = await outcome.events.next();
  }
  const end = step.value;
  if (!end.ok) {
    const error = end.refusal
      ? { type: end.refusal.type, message: end.message, code: end.refusal.code }
      : {
          type: 'api_error',
          message: `The stream failed after it started: ${end.message}`,
          code: 'upstream_error',
        };
    sse.event('error', { type: 'error', error });
    sse.end();
    return reply;
  }
  send(enc.finish(end.usage));
  sse.end();
  return reply;
}
