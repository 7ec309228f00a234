import type { FastifyInstance } from 'fastify';
import type { Workers } from './async/feature.ts';
import { sessionWorkDone } from './sessions/index.ts';
import type { ShutdownClock } from './shutdown.ts';
import type { RuntimeState } from './state/types.ts';
import { closeUpstreamPools } from './upstream/http.ts';

export interface Closable {
  app: FastifyInstance;
  ops: FastifyInstance;
  workers: Workers;
  state: RuntimeState;
}

/** What the writes after the requests (jobs, session turns, request logs) keep of the grace period. */
const reserveOf = (graceMs: number): number => Math.min(5000, Math.floor(graceMs / 4));

/**
 * A gateway's stop, in order, within the clock's grace period: sockets are told to reconnect
 * elsewhere, requests and streams finish (cut when only the reserve is left), job workers stop,
 * session turns and settled request logs are written. A step whose dependency hangs (Redis gone)
 * is abandoned when its share is up; the state layer logs the writes it could not make.
 */
export async function closeWithin(clock: ShutdownClock, g: Closable): Promise<void> {
  const reserveMs = reserveOf(clock.remaining());
  await clock.step('websocket drain', () => g.workers.drain(), reserveMs);
  const cut = setTimeout(() => g.app.server.closeAllConnections(), clock.remaining() - reserveMs);
  cut.unref();
  await clock.step('in-flight requests', () => g.app.close(), reserveMs / 2);
  clearTimeout(cut);
  await clock.step('metrics port', () => g.ops.close(), reserveMs);
  await clock.step('job workers', () => g.workers.close(), reserveMs / 2);
  // Session turns appended after their answers (and summaries under way) finish first, bounded.
  await clock.step('session writes', (ms) => sessionWorkDone(g.state, ms), reserveMs / 4);
  // Settled requests are written before the process goes; the state layer logs what it could not write.
  // Its own wait ends a little before the step's, so its report of unwritten entries is made.
  await clock.step('request logs and usage', (ms) => g.state.close(Math.max(0, ms - 100)));
  await clock.step('upstream connections', () => closeUpstreamPools());
  g.app.log.info({
    msg: 'gateway closed',
    ms: clock.elapsedMs(),
    ...(clock.abandoned.length > 0 ? { abandoned: clock.abandoned } : {}),
  });
}
