/**
 * Background responses under a fault, on three real gateway processes sharing one Redis (AOF): the
 * jobs of 24 background responses (12 answered whole, 12 streamed to readers on the survivors) are
 * running when one gateway is SIGKILLed. Its jobs are taken over by the others (BullMQ's stalled-job
 * check): each response is then read from a survivor and must have ended, none left queued or in
 * progress; a whole one is run again and completes, a streamed one completes or is marked failed,
 * and every stream carries exactly one final event. The counts are printed.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Fleet, type FleetGateway, startFleet } from '#devkit/fleet';
import { API_KEY, baseConfig, workflow } from '../../harness/manifests.ts';
import { type Simulator, startSimulator } from '../../simulator/index.ts';
import { parseSse } from '../native/helpers.ts';

const WHOLE = 12;
const STREAMED = 12;
const MODELS = ['slow-1800', 'interval-100-chunks-30'];
const FINAL = new Set(['response.completed', 'response.incomplete', 'error']);

let sim: Simulator;
let fleet: Fleet;

beforeAll(async () => {
  sim = await startSimulator();
  fleet = await startFleet({
    manifests: [
      ...baseConfig(sim.url, MODELS),
      workflow('whole', { provider: 'oai', model: 'slow-1800' }),
      workflow('streamed', { provider: 'oai', model: 'interval-100-chunks-30' }),
    ],
    gateways: 3,
    redis: 'single',
    env: { LOG_LEVEL: 'warn', SWITCHYARD_JOB_LOCK_MS: '2000' },
  });
}, 90_000);
afterAll(async () => {
  await fleet?.stop();
  await sim?.close();
});

const headers = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };

async function status(g: FleetGateway, id: string): Promise<string> {
  const res = await fetch(`${g.url}/v1/responses/${id}`, {
    headers: { authorization: headers.authorization },
  });
  return String(((await res.json()) as { status?: string }).status);
}

async function until(check: () => Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

it('a SIGKILLed gateway running background responses: every one ends, none stuck', async () => {
  const [g0, victim, g2] = fleet.gateways as [FleetGateway, FleetGateway, FleetGateway];
  const survivors = [g0, g2];
  const whole: string[] = [];
  for (let i = 0; i < WHOLE; i++) {
    const g = fleet.gateways[i % 3] as FleetGateway;
    const res = await fetch(`${g.url}/v1/responses`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: 'whole', input: `whole ${i}`, background: true }),
    });
    expect(res.status).toBe(200);
    whole.push(((await res.json()) as { id: string }).id);
  }
  // Streamed ones are read on the survivors, from their POST to their last event.
  const readers = Array.from({ length: STREAMED }, async (_, i) => {
    const res = await fetch(`${(survivors[i % 2] as FleetGateway).url}/v1/responses`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: 'streamed', input: `streamed ${i}`, background: true, stream: true }),
    });
    const events = parseSse(await res.text()).map(
      (f) => JSON.parse(f.data) as { type: string; response?: { id: string } },
    );
    return { id: String(events[0]?.response?.id), types: events.map((e) => e.type) };
  });
  // Everything is running (each has been taken by some gateway's worker) before the kill.
  await until(async () => {
    const ids = [...whole];
    const got = await Promise.all(ids.map((id) => status(g0, id)));
    return got.every((s) => s === 'in_progress');
  }, 20_000);
  await new Promise((r) => setTimeout(r, 600));
  const callsBeforeKill = sim.requests().length;
  await victim.kill('SIGKILL');

  const streams = await Promise.all(readers);
  const all = [...whole, ...streams.map((s) => s.id)];
  await until(async () => {
    const got = await Promise.all(all.map((id) => status(g2, id)));
    return got.every((s) => s !== 'queued' && s !== 'in_progress');
  }, 60_000);
  const final = await Promise.all(all.map(async (id) => [id, await status(g0, id)] as const));
  const count = (ids: string[], s: string) => final.filter(([id, st]) => ids.includes(id) && st === s).length;
  const streamedIds = streams.map((s) => s.id);
  const finalEvents = streams.map(
    (s) => s.types.filter((t) => FINAL.has(t) || t === 'response.failed').length,
  );
  const calls = sim.requests().length;
  console.log(
    `background responses, 1 of 3 gateways SIGKILLed mid-run: whole ${WHOLE} (completed ${count(whole, 'completed')}, ` +
      `failed ${count(whole, 'failed')}), streamed ${STREAMED} (completed ${count(streamedIds, 'completed')}, ` +
      `failed ${count(streamedIds, 'failed')}), stuck 0; provider calls ${calls} for ${WHOLE + STREAMED} responses ` +
      `(${callsBeforeKill} before the kill: the jobs run again after it are the killed gateway's)`,
  );
  expect(count(whole, 'completed')).toBe(WHOLE);
  expect(count(streamedIds, 'completed') + count(streamedIds, 'failed')).toBe(STREAMED);
  // Every stream ended with its one outcome: response.completed, or response.failed then error.
  for (const s of streams) {
    const last = s.types.at(-1);
    expect(last === 'response.completed' || last === 'error').toBe(true);
    expect(s.types.filter((t) => t === 'response.completed' || t === 'response.failed').length).toBe(1);
  }
  expect(finalEvents.every((n) => n >= 1)).toBe(true);
  // The killed gateway was running some of them: their jobs were run again elsewhere.
  expect(calls).toBeGreaterThan(WHOLE + STREAMED);
}, 120_000);
