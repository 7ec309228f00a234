import type { FastifyReply } from 'fastify';
import type { Exchange } from '../pipeline/exchange.ts';
import type { Outcome } from '../pipeline/outcome.ts';
import type { ResponseEcho } from './encode-responses.ts';
import { ResponsesStreamEncoder, type TypedEvent } from './encode-responses-stream.ts';
import { serviceHeaders } from './meta.ts';
import { SseWriter } from './sse.ts';

/**
 * Writes a streamed Responses answer: typed events, no `[DONE]`. `beforeCompleted` runs before the
 * final event goes out (the stored response must be durable before the client can continue from it);
 * if it fails, the stream ends with response.failed instead.
 */
export async function writeResponsesStream(
  reply: FastifyReply,
  ex: Exchange,
  outcome: Extract<Outcome, { kind: 'streaming' }>,
  echo: ResponseEcho,
  beforeCompleted: (response: Record<string, unknown>) => Promise<void>,
): Promise<FastifyReply> {
  reply.hijack();
  const sse = new SseWriter(reply.raw, serviceHeaders(ex, outcome, { duration: false }));
  const enc = new ResponsesStreamEncoder(echo);
  const send = (events: TypedEvent[]) => {
    for (const e of events) sse.event(e.type, e);
  };
  send(enc.start());
  let step = await outcome.events.next();
  while (!step.done) {
    send(enc.next(step.value));
    step = await outcome.events.next();
  }
  const end = step.value;
  if (!end.ok) {
    const code = end.refusal?.code ?? 'server_error';
    send(enc.fail(code, end.refusal ? end.message : `The stream failed after it started: ${end.message}`));
    sse.end();
    return reply;
  }
  const done = enc.finish(end.usage);
  try {
    await beforeCompleted(done.response);
  } catch {
    send(enc.fail('server_error', 'The response could not be stored; it is safe to retry.'));
    sse.end();
    return reply;
  }
  send(done.events);
  sse.end();
  return reply;
}
