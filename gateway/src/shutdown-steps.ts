import type { Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { AsyncJobs } from './async/jobs.ts';
import type { ShutdownClock } from './shutdown.ts';
import type { RuntimeState } from './state/types.ts';
import type { Tracing } from './tracing/types.ts';
import { closeUpstreamPools } from './upstream/http.ts';

/** What a gateway closes, as its composition root built it. */
export interface Closable {
  app: FastifyInstance;
  ops: FastifyInstance;
  jobs: AsyncJobs;
  /** Session turns and summaries still being written. */
  sessionWork(maxWaitMs: number): Promise<void>;
  /** Leases given back (what still runs stays committed) and stores closed. */
  features(): Promise<void>;
  state: RuntimeState;
  tracing: Tracing;
}

/** What the writes after the requests (jobs, session turns, request logs) keep of the grace period. */
const reserveOf = (graceMs: number): number => Math.min(5000, Math.floor(graceMs / 4));

/**
 * A draining gateway keeps its keep-alive connections open while they keep closing (each busy one
 * closes after its next answer, which carries `Connection: close`): until none is left, none closed
 * for QUIET_MS (the rest are idle), or the step's time is up.
 */
const QUIET_MS = 500;
const CONNECTION_DRAIN_MS = 2_000;

async function connectionsClosed(server: Server, withinMs: number): Promise<void> {
  const count = () => new Promise<number>((r) => server.getConnections((_err, n) => r(n ?? 0)));
  const end = Date.now() + withinMs;
  let open = await count();
  let changedAt = Date.now();
  while (open > 0 && Date.now() < end && Date.now() - changedAt < QUIET_MS) {
    await new Promise((r) => setTimeout(r, 50));
    const now = await count();
    if (now !== open) changedAt = Date.now();
    open = now;
  }
}

/**
 * A gateway's stop, in order, within the clock's grace period: sockets are told to reconnect
 * elsewhere, keep-alive clients move to other pods, requests and streams finish (cut when only the
 * reserve is left), job workers stop, session turns, leases and settled request logs are written.
 * A step whose dependency hangs (Redis gone) is abandoned when its share is up; the state layer
 * logs the writes it could not make.
 */
export async function closeWithin(clock: ShutdownClock, g: Closable): Promise<void> {
  const reserveMs = reserveOf(clock.remaining());
  await clock.step('websocket drain', () => g.jobs.drain(), reserveMs);
  const cut = setTimeout(() => g.app.server.closeAllConnections(), clock.remaining() - reserveMs);
  cut.unref();
  await clock.step(
    'keep-alive connections',
    (ms) => connectionsClosed(g.app.server, Math.min(ms, CONNECTION_DRAIN_MS)),
    reserveMs,
  );
  await clock.step('in-flight requests', () => g.app.close(), reserveMs / 2);
  clearTimeout(cut);
  await clock.step('metrics port', () => g.ops.close(), reserveMs);
  await clock.step('job workers', () => g.jobs.close(), reserveMs / 2);
  // Session turns appended after their answers (and summaries under way) finish first, bounded.
  await clock.step('session writes', (ms) => g.sessionWork(ms), reserveMs / 3);
  await clock.step('spend leases', () => g.features(), reserveMs / 4);
  // Settled requests are written before the process goes; the state layer logs what it could not write.
  // Its own wait ends a little before the step's, so its report of unwritten entries is made.
  await clock.step('request logs and usage', (ms) => g.state.close(Math.max(0, ms - 100)));
  await clock.step('upstream connections', () => closeUpstreamPools());
  // Last: every span of the work above has ended by now.
  await clock.step('traces', () => g.tracing.close());
  g.app.log.info({
    msg: 'gateway closed',
    ms: clock.elapsedMs(),
    ...(clock.abandoned.length > 0 ? { abandoned: clock.abandoned } : {}),
  });
}
