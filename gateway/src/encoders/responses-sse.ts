import type { FastifyReply } from 'fastify';
import type { Exchange } from '../pipeline/exchange.ts';
import type { PipelineResult } from '../pipeline/result.ts';
import type { ResponseEcho } from './encode-responses.ts';
import { ResponsesStreamEncoder, type TypedEvent } from './encode-responses-stream.ts';
import { writeStream } from './stream-out.ts';

/**
 * Writes a streamed Responses answer: typed events, no `[DONE]`. `beforeCompleted` runs before the
 * final event goes out (the stored response must be durable before the client can continue from it);
 * if it fails, the stream ends with response.failed instead.
 */
export function writeResponsesStream(
  reply: FastifyReply,
  ex: Exchange,
  result: Extract<PipelineResult, { kind: 'streaming' }>,
  echo: ResponseEcho,
  beforeCompleted: (response: Record<string, unknown>) => Promise<void>,
): Promise<FastifyReply> {
  const enc = new ResponsesStreamEncoder(echo);
  return writeStream(reply, ex, result, (sse) => {
    const send = (events: TypedEvent[]) => {
      for (const e of events) sse.event(e.type, e);
    };
    return {
      open: () => send(enc.start()),
      event: (ev) => send(enc.next(ev)),
      failed(f) {
        const code = f.refusal?.code ?? 'server_error';
        send(enc.fail(code, f.refusal ? f.message : `The stream failed after it started: ${f.message}`));
      },
      async answered(answer) {
        const done = enc.finish(answer.usage);
        try {
          await beforeCompleted(done.response);
        } catch {
          send(enc.fail('server_error', 'The response could not be stored; it is safe to retry.'));
          return;
        }
        send(done.events);
      },
    };
  });
}
