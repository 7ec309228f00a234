/**
 * Concurrent requests on one conversation (`conversation` on POST /v1/responses), on two gateway
 * processes sharing one Redis (AOF): the conversation's turn lock lets one turn at a time read and
 * append, so every request is answered with every turn appended before it, and the conversation
 * holds each turn once, whole, in the order they were answered. Then the same with Redis restarted
 * mid-way: requests fail with a retryable 503 while it is down, and what was answered stays
 * consistent. The counts are printed.
 */
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { startRedis } from '#devkit/redis';
import { type RunningGateway, startGateway } from '../../harness/gateway.ts';
import { API_KEY, baseConfig, workflow } from '../../harness/manifests.ts';
import { type Simulator, startSimulator } from '../../simulator/index.ts';

let sim: Simulator;
let redis: Awaited<ReturnType<typeof startRedis>>;
let a: RunningGateway;
let b: RunningGateway;

beforeAll(async () => {
  sim = await startSimulator();
  redis = await startRedis({ appendonly: true });
  const manifests = [...baseConfig(sim.url), workflow('slowish', { provider: 'oai', model: 'slow-300' })];
  a = await startGateway(manifests, { redisUrl: redis.url });
  b = await startGateway(manifests, { redisUrl: redis.url });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await redis?.stop();
  await sim?.close();
});
beforeEach(() => sim.clearRequests());

const headers = { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' };

async function newConversation(): Promise<string> {
  const res = await fetch(`${a.url}/v1/conversations`, { method: 'POST', headers, body: '{}' });
  return ((await res.json()) as { id: string }).id;
}

async function turn(gw: RunningGateway, conversation: string, input: string): Promise<number> {
  try {
    const res = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ model: 'slowish', conversation, input }),
    });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

/** The user inputs of the conversation's items, in order, and whether each turn is whole (input, then its answer). */
async function userTurns(conversation: string): Promise<{ inputs: string[]; whole: boolean; items: number }> {
  const res = await fetch(`${a.url}/v1/conversations/${conversation}/items?order=asc&limit=100`, { headers });
  const items = ((await res.json()) as { data: { role?: string; content: { text: string }[] }[] }).data;
  const inputs: string[] = [];
  let whole = items.length % 2 === 0;
  for (let i = 0; i < items.length; i += 2) {
    const input = items[i]?.content[0]?.text ?? '';
    inputs.push(input);
    const answer = items[i + 1];
    if (items[i]?.role !== 'user' || answer?.role !== 'assistant' || !answer.content[0]?.text.endsWith(input))
      whole = false;
  }
  return { inputs, whole, items: items.length };
}

/** The user inputs each provider call saw, history first, its own input last. */
const seen = (): string[][] =>
  sim
    .requests()
    .map((r) =>
      ((r.body as { messages: { role: string; content: string }[] }).messages ?? [])
        .filter((m) => m.role === 'user')
        .map((m) => m.content),
    );

it('concurrent turns on one conversation are answered one after the other, each with all before it', async () => {
  const conversation = await newConversation();
  const N = 8;
  const statuses = await Promise.all(
    Array.from({ length: N }, (_, i) => turn(i % 2 ? b : a, conversation, `turn ${i}`)),
  );
  expect(statuses).toEqual(Array(N).fill(200));
  const calls = seen().sort((x, y) => x.length - y.length);
  const final = await userTurns(conversation);
  console.log(
    `turn lock: ${N} concurrent turns on one conversation over 2 gateways: ${N} answered, ` +
      `history sizes seen ${calls.map((c) => c.length - 1).join(',')}, ${final.items} items, whole ${final.whole}`,
  );
  // Each call saw every turn answered before it: 0, 1, 2, ... earlier turns, in the conversation's order.
  expect(calls.map((c) => c.length - 1)).toEqual(Array.from({ length: N }, (_, i) => i));
  for (const c of calls) expect(c).toEqual(final.inputs.slice(0, c.length));
  expect(final.items).toBe(2 * N);
  expect(final.whole).toBe(true);
}, 60_000);

it('Redis restarted mid-way: answered turns are each in the conversation once, whole, in order', async () => {
  const conversation = await newConversation();
  const N = 12;
  const runs = Array.from({ length: N }, (_, i) => turn(i % 2 ? b : a, conversation, `step ${i}`));
  // Mid-way: once the first turn has its answer, the others still queued behind the lock.
  await Promise.race(runs);
  await redis.restart();
  const statuses = await Promise.all(runs);
  const answered = statuses.filter((s) => s === 200).length;
  const refused = statuses.filter((s) => s === 503 || s === 409).length;
  const final = await userTurns(conversation);
  const calls = seen();
  console.log(
    `turn lock, Redis restarted after the first answer: ${N} turns: ${answered} answered, ${refused} refused (503/409), ` +
      `${statuses.length - answered - refused} other (${statuses.join(',')}); conversation: ${final.inputs.length} turns, ` +
      `${final.items} items, whole ${final.whole}; provider calls ${calls.length}`,
  );
  expect(answered + refused).toBe(N);
  expect(answered).toBeGreaterThan(0);
  expect(final.whole).toBe(true);
  // Each turn at most once; every answered one present (AOF: what was written before the restart stays).
  expect(new Set(final.inputs).size).toBe(final.inputs.length);
  expect(final.inputs.length).toBeGreaterThanOrEqual(answered);
  // Every provider call's history is a prefix of the conversation: no turn was answered without one before it.
  for (const c of calls) expect(c.slice(0, -1)).toEqual(final.inputs.slice(0, c.length - 1));
}, 90_000);
