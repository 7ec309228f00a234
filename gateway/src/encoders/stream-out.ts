import type { FastifyReply } from 'fastify';
import type { Exchange } from '../pipeline/exchange.ts';
import type { Answer, Failure, PipelineResult, StreamEnd } from '../pipeline/result.ts';
import type { StreamEvent } from '../providers/types.ts';
import { serviceHeaders } from './meta.ts';
import { SseWriter } from './sse.ts';

/** How one surface spells a stream: its first frames, each event, and its two endings. */
export interface StreamDialect {
  open(): void;
  event(ev: StreamEvent): void;
  /** The stream broke after it started (or a cap stopped it): an explicit error, never a silent end. */
  failed(failure: Failure): void;
  /** The stream answered. May wait (a stored response made durable) before its last frames. */
  answered(answer: Answer, end: StreamEnd): Promise<void> | void;
}

/**
 * Every surface's SSE answer: the x-service-* headers, the dialect's frames for each event, its
 * ending; and, however the writing ends, the stream followed to its end, so its features finish and
 * it settles.
 */
export async function writeStream(
  reply: FastifyReply,
  ex: Exchange,
  result: Extract<PipelineResult, { kind: 'streaming' }>,
  dialect: (sse: SseWriter) => StreamDialect,
): Promise<FastifyReply> {
  const { events } = result;
  let end: StreamEnd | undefined;
  try {
    reply.hijack();
    const sse = new SseWriter(reply.raw, serviceHeaders(ex, result, { duration: false }));
    const d = dialect(sse);
    d.open();
    let step = await events.next();
    while (!step.done) {
      d.event(step.value);
      step = await events.next();
    }
    end = step.value;
    if (end.ok) await d.answered(end.answer, end);
    else d.failed(end.failure);
    sse.end();
    return reply;
  } finally {
    if (!end) for await (const _ of { [Symbol.asyncIterator]: () => events });
  }
}
