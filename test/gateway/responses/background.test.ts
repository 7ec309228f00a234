/**
 * Background responses (`background: true`) with the official `openai` SDK at its defaults, on two
 * gateway processes sharing one Redis: accepted `queued` on one, polled on the other until done, a
 * streamed one read back from a sequence number on the other process, cancels (queued, running,
 * finished, not background) and bad input in OpenAI's error shape.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedis } from '#devkit/redis';
import { type RunningGateway, startGateway } from '../../harness/gateway.ts';
import { API_KEY, baseConfig, workflow } from '../../harness/manifests.ts';
import { type Simulator, startSimulator } from '../../simulator/index.ts';

const MODELS = ['gpt-4o-mini', 'hang', 'slow-800', 'interval-40-chunks-12', 'fail-503'];

let sim: Simulator;
let redis: Awaited<ReturnType<typeof startRedis>>;
let a: RunningGateway;
let b: RunningGateway;

const manifests = (simUrl: string) => [
  ...baseConfig(simUrl, MODELS),
  workflow('assistant', { provider: 'oai', model: 'gpt-4o-mini' }),
  workflow('slow', { provider: 'oai', model: 'slow-800' }),
  workflow('hang', { provider: 'oai', model: 'hang' }),
  workflow('chunky', { provider: 'claude', model: 'interval-40-chunks-12' }),
  workflow('broken', { provider: 'oai', model: 'fail-503' }),
];

beforeAll(async () => {
  sim = await startSimulator();
  redis = await startRedis();
  a = await startGateway(manifests(sim.url), { redisUrl: redis.url });
  b = await startGateway(manifests(sim.url), { redisUrl: redis.url });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await redis?.stop();
  await sim?.close();
});

const client = (gw: RunningGateway) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: API_KEY });

async function until<T>(f: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

const finished = (gw: RunningGateway, id: string) =>
  until(async () => {
    const r = await client(gw).responses.retrieve(id);
    return r.status === 'queued' || r.status === 'in_progress' ? undefined : r;
  });

describe('background: true', () => {
  it('is answered queued, runs as a job and is polled to completed from another process', async () => {
    const r = await client(a).responses.create({ model: 'slow', input: 'Say hello', background: true });
    expect(r).toMatchObject({ object: 'response', status: 'queued', background: true, output: [] });
    const seen = new Set<string>();
    const done = await until(async () => {
      const now = await client(b).responses.retrieve(r.id);
      seen.add(now.status ?? '');
      return now.status === 'completed' ? now : undefined;
    });
    expect(done.output_text.length).toBeGreaterThan(0);
    expect(done.usage?.total_tokens).toBeGreaterThan(0);
    expect(seen.has('in_progress')).toBe(true);
    // It is continued like any stored response.
    const next = await client(b).responses.create({
      model: 'assistant',
      input: 'And again',
      previous_response_id: r.id,
    });
    expect(next.status).toBe('completed');
  });

  it('a failing provider ends the response failed, with an error the spec names', async () => {
    const r = await client(a).responses.create({ model: 'broken', input: 'hi', background: true });
    const done = await finished(b, r.id);
    expect(done.status).toBe('failed');
    expect(done.error?.code).toBe('server_error');
  });

  it('streams its events; another process resumes the stream after a sequence number', async () => {
    const stream = await client(a).responses.create({
      model: 'chunky',
      input: 'Count',
      background: true,
      stream: true,
    });
    const events: { type: string; sequence_number: number }[] = [];
    for await (const e of stream) events.push(e);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events.slice(0, 3).map((e) => e.type)).toEqual([
      'response.created',
      'response.queued',
      'response.in_progress',
    ]);
    expect(events.at(-1)?.type).toBe('response.completed');
    expect(events.filter((e) => e.type === 'response.output_text.delta').length).toBeGreaterThan(3);
    const id = (events[0] as unknown as { response: { id: string } }).response.id;
    const resumed = await client(b).responses.retrieve(id, { stream: true, starting_after: 4 });
    const rest: unknown[] = [];
    for await (const e of resumed) rest.push(e);
    expect(rest).toEqual(events.slice(5));
    const all = await client(b).responses.retrieve(id, { stream: true });
    const again: unknown[] = [];
    for await (const e of all) again.push(e);
    expect(again).toEqual(events);
  });

  it('cancels a queued or running response from another process; a second cancel returns it unchanged', async () => {
    const r = await client(a).responses.create({ model: 'hang', input: 'hi', background: true });
    await until(async () =>
      (await client(b).responses.retrieve(r.id)).status === 'in_progress' ? true : undefined,
    );
    const cancelled = await client(b).responses.cancel(r.id);
    expect(cancelled).toMatchObject({ id: r.id, status: 'cancelled', background: true });
    expect((await client(a).responses.cancel(r.id)).status).toBe('cancelled');
    // The job stops at its next look and leaves the response cancelled.
    await new Promise((res) => setTimeout(res, 400));
    expect((await client(a).responses.retrieve(r.id)).status).toBe('cancelled');
  });

  it('cancelling a finished background response returns it as it is', async () => {
    const r = await client(a).responses.create({ model: 'assistant', input: 'hi', background: true });
    const done = await finished(a, r.id);
    expect(done.status).toBe('completed');
    const { output_text: _, ...stored } = done;
    expect(await client(b).responses.cancel(r.id)).toEqual(stored);
  });

  it('a streamed response cancelled mid-stream ends its readers without a completion', async () => {
    const stream = await client(a).responses.create({
      model: 'hang',
      input: 'x',
      background: true,
      stream: true,
    });
    const types: string[] = [];
    let id = '';
    for await (const e of stream) {
      types.push(e.type);
      if (e.type === 'response.created') id = e.response.id;
      if (e.type === 'response.in_progress') await client(b).responses.cancel(id);
    }
    expect(types).toEqual(['response.created', 'response.queued', 'response.in_progress']);
    expect((await client(b).responses.retrieve(id)).status).toBe('cancelled');
  });
});

describe('background responses on a conversation', () => {
  it('take their turn under the conversation lock with requests: every turn sees all before it', async () => {
    const conv = await client(a).conversations.create({});
    sim.clearRequests();
    const background = [0, 1, 2].map(async (i) => {
      const r = await client(i % 2 ? b : a).responses.create({
        model: 'assistant',
        input: `bg ${i}`,
        conversation: conv.id,
        background: true,
      });
      return (await finished(b, r.id)).status;
    });
    const sync = [0, 1, 2].map(
      async (i) =>
        (
          await client(i % 2 ? a : b).responses.create({
            model: 'assistant',
            input: `sync ${i}`,
            conversation: conv.id,
          })
        ).status,
    );
    expect(await Promise.all([...background, ...sync])).toEqual(Array(6).fill('completed'));
    const sizes = sim
      .requests()
      .map((r) => ((r.body as { messages: unknown[] }).messages ?? []).length)
      .sort((x, y) => x - y);
    expect(sizes).toEqual([1, 3, 5, 7, 9, 11]);
    const items = await client(a).conversations.items.list(conv.id, { order: 'asc', limit: 100 });
    expect(items.data).toHaveLength(12);
  });
});

describe('a background response whose conversation goes away before its turn', () => {
  it('fails with the reason, once, and is not left running', async () => {
    const conv = await client(a).conversations.create({});
    // A slow turn holds the conversation's lock; the background one waits for it, then finds it deleted.
    const slow = client(a)
      .responses.create({ model: 'slow', input: 'first', conversation: conv.id })
      .then(
        () => 200,
        (err: { status?: number }) => err.status,
      );
    await new Promise((r) => setTimeout(r, 150));
    const r = await client(b).responses.create({
      model: 'assistant',
      input: 'second',
      conversation: conv.id,
      background: true,
    });
    await client(a).conversations.delete(conv.id);
    const done = await finished(a, r.id);
    expect(done.status).toBe('failed');
    expect(done.error?.message).toContain('not found');
    expect(await slow).toBe(404);
  });
});

describe('bad input, in OpenAI error shape', () => {
  const post = async (gw: RunningGateway, path: string, body?: unknown, method = 'POST') => {
    const res = await fetch(`${gw.url}/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${API_KEY}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as { error: Record<string, unknown> } };
  };

  it('refuses what cannot be honoured, never a 5xx', async () => {
    const noStore = await post(a, '/responses', {
      model: 'assistant',
      input: 'x',
      background: true,
      store: false,
    });
    expect(noStore.status).toBe(400);
    expect(noStore.body.error).toMatchObject({ type: 'invalid_request_error', param: 'store' });
    const bad = await post(a, '/responses', { model: 'assistant', input: 'x', background: 'yes' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('background');

    const sync = await client(a).responses.create({ model: 'assistant', input: 'x' });
    const notBg = await post(a, `/responses/${sync.id}/cancel`);
    expect(notBg.status).toBe(400);
    expect(notBg.body.error.message).toContain('background');
    const notStreamed = await post(a, `/responses/${sync.id}?stream=true`, undefined, 'GET');
    expect(notStreamed.status).toBe(400);
    expect(notStreamed.body.error.param).toBe('stream');
    const badAfter = await post(a, `/responses/${sync.id}?stream=true&starting_after=x`, undefined, 'GET');
    expect(badAfter.status).toBe(400);
    expect(badAfter.body.error.param).toBe('starting_after');
    const missing = await post(a, '/responses/resp_nope/cancel');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('response_not_found');
  });
});
