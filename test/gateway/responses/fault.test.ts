/**
 * Stored responses under a fault, on real gateway processes sharing one Redis (AOF, fsync always):
 * conversations chained with previous_response_id alternate between two gateways while one is
 * SIGKILLed. A response is stored before its answer is sent, so every answer a client received can
 * be retrieved and continued on the survivor. The counts are printed.
 */
import { resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Fleet, type FleetGateway, startFleet } from '#devkit/fleet';

const EXAMPLES = resolve(import.meta.dirname, '../../../examples');
const KEY = 'sy_live_HEUADsAxMSNV8on9X3NkkU2lkBArrZ1v';
const CHAINS = 6;
const TURNS = 10;

let fleet: Fleet;

beforeAll(async () => {
  fleet = await startFleet({ configDir: EXAMPLES, gateways: 2, redis: 'single', env: { LOG_LEVEL: 'warn' } });
}, 60_000);

afterAll(async () => {
  await fleet?.stop();
});

interface Chain {
  last: string | undefined;
  received: string[];
  unknown: number;
}

async function turn(g: FleetGateway, c: Chain, text: string): Promise<'ok' | 'down'> {
  try {
    const res = await fetch(`${g.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'support-chat',
        input: text,
        ...(c.last ? { previous_response_id: c.last } : {}),
      }),
      signal: AbortSignal.timeout(5000),
    });
    const body = (await res.json()) as { id?: string };
    if (res.status !== 200 || !body.id) throw new Error(`status ${res.status}`);
    c.last = body.id;
    c.received.push(body.id);
    return 'ok';
  } catch {
    c.unknown++;
    return 'down';
  }
}

it('a SIGKILLed gateway loses no answered response: each can be retrieved and continued', async () => {
  const [survivor, victim] = fleet.gateways as [FleetGateway, FleetGateway];
  const chains: Chain[] = Array.from({ length: CHAINS }, () => ({
    last: undefined,
    received: [],
    unknown: 0,
  }));
  let killed = false;
  let inFlight = 0;
  const lane = async (c: Chain, i: number) => {
    for (let n = 0; n < TURNS; n++) {
      const g = n % 2 === 1 && !killed ? victim : survivor;
      if (g === victim) inFlight++;
      const r = await turn(g, c, `chain ${i} turn ${n}`);
      if (g === victim) inFlight--;
      if (r === 'down') n--; // the client retries on the survivor, continuing from its last answer
    }
  };
  const lanes = chains.map((c, i) => lane(c, i));
  await new Promise((r) => setTimeout(r, 150));
  const inFlightAtKill = inFlight;
  killed = true;
  await victim.kill('SIGKILL');
  await Promise.all(lanes);

  let retrievable = 0;
  let lost = 0;
  for (const c of chains)
    for (const id of c.received) {
      const res = await fetch(`${survivor.url}/v1/responses/${id}`, {
        headers: { authorization: `Bearer ${KEY}` },
      });
      await res.arrayBuffer();
      if (res.status === 200) retrievable++;
      else lost++;
    }
  // The last answer of each chain still continues, on the survivor, with the whole conversation.
  const items = await fetch(`${survivor.url}/v1/responses/${chains[0]!.last}/input_items`, {
    headers: { authorization: `Bearer ${KEY}` },
  });
  expect(items.status).toBe(200);
  const received = chains.reduce((n, c) => n + c.received.length, 0);
  console.log(
    `stored responses after SIGKILL: ${CHAINS} chains, ${received} answers received, ${retrievable} retrievable, ` +
      `${lost} lost, ${chains.reduce((n, c) => n + c.unknown, 0)} requests without an answer ` +
      `(the killed pod had ${inFlightAtKill} in flight)`,
  );
  expect(lost).toBe(0);
  expect(received).toBe(CHAINS * TURNS);
}, 90_000);
