/**
 * A gateway pod's stdout log lines are buffered (gateway/src/observability/log-destination.ts):
 * each request's line still reaches stdout within a fraction of a second at light traffic, and a
 * graceful stop writes every line the buffer held. Real gateway process, real Redis.
 */
import { resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Fleet, startFleet } from '#devkit/fleet';

const EXAMPLES = resolve(import.meta.dirname, '../../examples');
const KEY = 'sy_live_HEUADsAxMSNV8on9X3NkkU2lkBArrZ1v';

let fleet: Fleet;

beforeAll(async () => {
  fleet = await startFleet({ configDir: EXAMPLES, gateways: 1, redis: 'single', env: { LOG_LEVEL: 'info' } });
}, 60_000);

afterAll(async () => {
  await fleet?.stop();
});

async function ask(url: string): Promise<string> {
  const res = await fetch(`${url}/v1/ai`, {
    method: 'POST',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ workflow: 'support-chat', messages: [{ role: 'user', content: 'Hello!' }] }),
  });
  await res.arrayBuffer();
  expect(res.status).toBe(200);
  const id = res.headers.get('x-service-request-log-id');
  if (!id) throw new Error('no request-log id');
  return id;
}

it('writes each request line within the flush interval, and every held line at a graceful stop', async () => {
  const g = fleet.gateways[0]!;
  const logged = () =>
    new Set(g.logs().flatMap((l) => (l.json?.msg === 'request' ? [String(l.json.request_log_id)] : [])));

  const first: string[] = [];
  for (let i = 0; i < 5; i++) first.push(await ask(g.url));
  const t0 = Date.now();
  while (!first.every((id) => logged().has(id))) {
    if (Date.now() - t0 > 5_000) throw new Error('request lines did not reach stdout within 5 s');
    await new Promise((r) => setTimeout(r, 10));
  }
  const waitedMs = Date.now() - t0;

  const second: string[] = [];
  for (let i = 0; i < 5; i++) second.push(await ask(g.url));
  await fleet.stop();
  const after = logged();
  console.log(
    `log lines: the first 5 (less than the 8 KB buffer) on stdout ${waitedMs} ms after the last answer; ` +
      `${second.filter((id) => after.has(id)).length} of the next 5 written by the graceful stop`,
  );
  expect(second.filter((id) => !after.has(id))).toEqual([]);
}, 60_000);
