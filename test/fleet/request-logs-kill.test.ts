/**
 * Request logs survive a crashed pod: three gateway processes on one Redis take traffic, one is
 * SIGKILLed mid-way, and every answer a client received must have its request-log entry, except
 * at most the requests that pod had in flight when it died and those it answered in its last flush
 * window (SWITCHYARD_STATE_FLUSH_MS, 5 ms by default; counted here over the last WINDOW_MS before
 * the kill, which allows for a late timer on a busy machine).
 */
import { resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Fleet, type FleetGateway, startFleet } from '#devkit/fleet';

const EXAMPLES = resolve(import.meta.dirname, '../../examples');
const KEY = 'sy_live_HEUADsAxMSNV8on9X3NkkU2lkBArrZ1v';
const LANES_PER_GATEWAY = 8;
const WINDOW_MS = 25;

let fleet: Fleet;

beforeAll(async () => {
  fleet = await startFleet({ configDir: EXAMPLES, gateways: 3, redis: 'single', env: { LOG_LEVEL: 'warn' } });
}, 60_000);

afterAll(async () => {
  await fleet?.stop();
});

interface Received {
  gateway: number;
  id: string;
  at: number;
}

it('loses at most the in-flight requests and the last flush window of a SIGKILLed gateway', async () => {
  const received: Received[] = [];
  const inFlight = [0, 0, 0];
  let stopped = false;

  const lane = async (g: FleetGateway): Promise<void> => {
    while (!stopped) {
      inFlight[g.index]!++;
      try {
        const res = await fetch(`${g.url}/v1/ai`, {
          method: 'POST',
          headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({ workflow: 'support-chat', messages: [{ role: 'user', content: 'Hello!' }] }),
          signal: AbortSignal.timeout(5000),
        });
        await res.arrayBuffer();
        const id = res.headers.get('x-service-request-log-id');
        if (res.status === 200 && id) received.push({ gateway: g.index, id, at: performance.now() });
      } catch {
        return; // this pod is gone: the lane stops, as a client would fail over elsewhere
      } finally {
        inFlight[g.index]!--;
      }
    }
  };

  const lanes = fleet.gateways.flatMap((g) => Array.from({ length: LANES_PER_GATEWAY }, () => lane(g)));
  const victim = fleet.gateways[1]!;
  await until(() => received.length >= 300, 20_000);
  // Requests sent to the victim and not yet answered: what a crash may legitimately lose.
  const killedAt = inFlight[1]!;
  const killTime = performance.now();
  const lastWindow = received.filter((r) => r.gateway === 1 && r.at >= killTime - WINDOW_MS).length;
  await victim.kill('SIGKILL');
  const atKill = received.length;
  await until(() => received.length >= atKill + 300, 20_000);
  stopped = true;
  await Promise.all(lanes);

  // The survivors write their settlements right after answering; wait until the logs stop growing.
  const logged = await readAllLogIds(fleet.gateways[0]!, received.length);
  const missing = received.filter((r) => !logged.has(r.id));
  const fromVictim = received.filter((r) => r.gateway === 1).length;
  console.log(
    `request logs after SIGKILL: ${received.length} answers received (${fromVictim} from the killed pod), ` +
      `${logged.size} entries logged, ${missing.length} missing; the killed pod had ${killedAt} in flight ` +
      `and answered ${lastWindow} in the ${WINDOW_MS} ms before the kill`,
  );
  expect(fromVictim).toBeGreaterThan(0);
  expect(missing.filter((m) => m.gateway !== 1)).toEqual([]);
  expect(missing.length).toBeLessThanOrEqual(killedAt + lastWindow);
}, 90_000);

async function until(cond: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('timed out waiting for traffic');
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Every request_log_id of the project, paging newest first; re-read until two reads agree. */
async function readAllLogIds(g: FleetGateway, atLeast: number): Promise<Set<string>> {
  let previous = -1;
  const deadline = Date.now() + 10_000;
  for (;;) {
    const ids = new Set<string>();
    let cursor: string | null = null;
    do {
      const q = `limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const res = await fetch(`${g.url}/v1/request-logs?${q}`, {
        headers: { authorization: `Bearer ${KEY}` },
      });
      expect(res.status).toBe(200);
      const page = (await res.json()) as { data: { request_log_id: string }[]; next_cursor: string | null };
      for (const e of page.data) ids.add(e.request_log_id);
      cursor = page.next_cursor;
    } while (cursor);
    if ((ids.size === previous && ids.size > 0) || Date.now() > deadline) return ids;
    previous = ids.size;
    await new Promise((r) => setTimeout(r, ids.size >= atLeast ? 200 : 100));
  }
}
