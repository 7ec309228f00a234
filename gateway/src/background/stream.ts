import type { FastifyReply } from 'fastify';
import { SseWriter } from '../encoders/sse.ts';
import { type BackgroundDeps, FINAL_EVENTS, LIVE } from './types.ts';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());

/**
 * Streams a background response's events after sequence number `after` (-1: from the first), as
 * they are appended by whichever pod runs its job, until its last event, or until the response
 * stops changing (cancelled) and nothing more is left to send, or the client goes away.
 */
export async function streamEvents(
  d: BackgroundDeps,
  reply: FastifyReply,
  projectId: string,
  id: string,
  after: number,
): Promise<FastifyReply> {
  reply.hijack();
  const sse = new SseWriter(reply.raw, {});
  let next = after + 1;
  let settled = false;
  while (sse.open) {
    const raw = await d.store.events(projectId, id, next);
    for (const json of raw) {
      const e = JSON.parse(json) as { type: string };
      sse.event(e.type, e);
      next++;
      if (FINAL_EVENTS.has(e.type)) {
        sse.end();
        return reply;
      }
    }
    if (raw.length > 0) continue;
    // Nothing new: a response no longer live gets one more read (its job may have written last).
    if (settled) break;
    const rec = await d.store.get(projectId, id);
    if (!rec || !(LIVE as readonly string[]).includes(String(rec.response.status))) settled = true;
    else await sleep(d.pollMs);
  }
  sse.end();
  return reply;
}
