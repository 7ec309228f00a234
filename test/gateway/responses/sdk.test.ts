/**
 * POST /v1/responses with the official `openai` SDK against a real gateway in front of the provider
 * simulator: create, stream, retrieve, delete, input_items, a function-calling round trip, and
 * previous_response_id continued on a second gateway process on the same Redis.
 */
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startRedis } from '#devkit/redis';
import { STORED_RESPONSE_KEYS } from '#gateway/stored-responses/keys';
import { type RunningGateway, startGateway } from '../../harness/gateway.ts';
import {
  API_KEY,
  baseConfig,
  NS,
  OTHER_KEY,
  PROJECT_ID,
  project,
  workflow,
} from '../../harness/manifests.ts';
import { type Simulator, startSimulator } from '../../simulator/index.ts';
import { workflowOf } from '../../spend/manifests.ts';

const WEATHER = {
  type: 'function' as const,
  name: 'get_weather',
  description: 'Weather for a city.',
  parameters: {
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
    additionalProperties: false,
  },
  strict: true,
};

let sim: Simulator;
let redis: Awaited<ReturnType<typeof startRedis>>;
let a: RunningGateway;
let b: RunningGateway;

/** baseConfig's second project ("other") keeps stored responses for 2 days. */
const manifests = (simUrl: string) => [
  ...baseConfig(simUrl).map((o) =>
    (o as { kind?: string; metadata?: { name?: string } }).kind === 'Project' &&
    (o as { metadata: { name: string } }).metadata.name === 'other'
      ? project('other', { storedResponses: { retentionDays: 2 } })
      : o,
  ),
  workflow('assistant', { provider: 'oai', model: 'gpt-4o-mini' }),
  workflow('claude', { provider: 'claude', model: 'claude-haiku-4-5' }),
  workflow('gem', { provider: 'gem', model: 'gemini-2.5-flash' }),
  workflowOf('other', 'other-assistant', { provider: 'oai', model: 'gpt-4o-mini' }),
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
beforeEach(() => sim.clearRequests());

const client = (gw: RunningGateway = a, key = API_KEY) =>
  new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0, timeout: 15_000 });

describe('responses.create', () => {
  it('answers a string input with a message item, usage and the workflow as model', async () => {
    const r = await client().responses.create({
      model: 'assistant',
      input: 'Say hello',
      instructions: 'Be brief.',
    });
    expect(r.id).toMatch(/^resp_/);
    expect(r.object).toBe('response');
    expect(r.status).toBe('completed');
    expect(r.model).toBe('assistant');
    expect(r.output_text).toContain('Simulated openai/gpt-4o-mini');
    expect(r.output[0]).toMatchObject({ type: 'message', role: 'assistant', status: 'completed' });
    expect(r.usage?.total_tokens).toBe((r.usage?.input_tokens ?? 0) + (r.usage?.output_tokens ?? 0));
    expect(r.usage?.input_tokens_details.cached_tokens).toBe(0);
    expect(sim.requests().map((q) => q.body)).toEqual([
      {
        model: 'gpt-4o-mini',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Say hello' },
        ],
      },
    ]);
  });

  it('streams typed events with sequence numbers and no [DONE]', async () => {
    const stream = await client().responses.create({ model: 'claude', input: 'Stream please', stream: true });
    const events = [];
    for await (const ev of stream) events.push(ev);
    const types = events.map((e) => e.type);
    expect(types.slice(0, 5)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
    ]);
    expect(types.slice(-4)).toEqual([
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const text = events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : [])).join('');
    const done = events.at(-1);
    if (done?.type !== 'response.completed') throw new Error('no response.completed');
    expect(done.response.output).toMatchObject([
      { type: 'message', status: 'completed', content: [{ type: 'output_text', text }] },
    ]);
    expect(done.response.usage?.output_tokens).toBeGreaterThan(0);
    expect(text).toContain('Simulated anthropic/claude-haiku-4-5');
  });

  it('responses.stream() helper gives the final response', async () => {
    const stream = client().responses.stream({ model: 'gem', input: 'hello gemini' });
    let deltas = '';
    stream.on('response.output_text.delta', (e) => {
      deltas += e.delta;
    });
    const final = await stream.finalResponse();
    expect(final.output_text).toBe(deltas);
    expect(final.status).toBe('completed');
  });
});

describe('stored responses', () => {
  it('retrieve, input_items and delete', async () => {
    const created = await client().responses.create({
      model: 'assistant',
      input: [
        { role: 'developer', content: 'Answer in French.' },
        { role: 'user', content: [{ type: 'input_text', text: 'Bonjour' }] },
      ],
      metadata: { ticket: 'T-1' },
    });
    const got = await client(b).responses.retrieve(created.id);
    expect(got).toEqual(created);
    const items = await client(b).responses.inputItems.list(created.id);
    expect(items.data.map((i) => i.type === 'message' && i.role)).toEqual(['user', 'developer']);
    const asc = await client().responses.inputItems.list(created.id, { order: 'asc', limit: 1 });
    expect(asc.data).toHaveLength(1);
    expect(asc.has_more).toBe(true);
    await client(b).responses.delete(created.id);
    await expect(client().responses.retrieve(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('store: false is not kept', async () => {
    const r = await client().responses.create({ model: 'assistant', input: 'x', store: false });
    await expect(client().responses.retrieve(r.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("another project's id is a 404, on retrieve and as previous_response_id", async () => {
    const r = await client().responses.create({ model: 'assistant', input: 'mine' });
    const other = client(a, OTHER_KEY);
    await expect(other.responses.retrieve(r.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const err = await other.responses
      .create({ model: 'other-assistant', input: 'x', previous_response_id: r.id })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    expect((err as InstanceType<typeof OpenAI.NotFoundError>).param).toBe('previous_response_id');
  });
});

describe('a streamed response is stored before response.completed is sent', () => {
  it('another process continues it as soon as the stream ends', async () => {
    const stream = await client(a).responses.create({
      model: 'assistant',
      input: 'first, streamed',
      stream: true,
    });
    let id = '';
    for await (const ev of stream) if (ev.type === 'response.completed') id = ev.response.id;
    const next = await client(b).responses.create({
      model: 'assistant',
      previous_response_id: id,
      input: 'second',
    });
    expect(next.status).toBe('completed');
    const last = sim.requests().at(-1)!.body as { messages: { role: string }[] };
    expect(last.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
  });
});

describe('retention', () => {
  it("a stored response expires after its project's retention (default 30 days)", async () => {
    const mine = await client().responses.create({ model: 'assistant', input: 'keep me' });
    const theirs = await client(a, OTHER_KEY).responses.create({
      model: 'other-assistant',
      input: 'keep me',
    });
    const redisClient = new Redis(redis.url);
    try {
      const day = 86_400_000;
      const ttlMine = await redisClient.pttl(STORED_RESPONSE_KEYS.response(PROJECT_ID, mine.id));
      const ttlTheirs = await redisClient.pttl(STORED_RESPONSE_KEYS.response(`${NS}.other`, theirs.id));
      expect(ttlMine).toBeGreaterThan(30 * day - 60_000);
      expect(ttlMine).toBeLessThanOrEqual(30 * day);
      expect(ttlTheirs).toBeGreaterThan(2 * day - 60_000);
      expect(ttlTheirs).toBeLessThanOrEqual(2 * day);
    } finally {
      redisClient.disconnect();
    }
  });
});

describe('previous_response_id and function calling', () => {
  it('a tool round trip, the second turn on another process right after the first answer', async () => {
    const first = await client(a).responses.create({
      model: 'assistant',
      input: 'What is the weather in Paris?',
      tools: [WEATHER],
    });
    const call = first.output.find((o) => o.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', status: 'completed' });
    if (call?.type !== 'function_call') throw new Error('no call');
    const second = await client(b).responses.create({
      model: 'assistant',
      previous_response_id: first.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"temp_c": 21}' }],
      tools: [WEATHER],
    });
    expect(second.status).toBe('completed');
    expect(second.output_text).toContain('Simulated openai/gpt-4o-mini');
    const upstream = sim.requests().map((q) => q.body as { messages: unknown[] });
    expect(upstream[1]!.messages).toEqual([
      { role: 'user', content: 'What is the weather in Paris?' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: call.call_id,
            type: 'function',
            function: { name: 'get_weather', arguments: call.arguments },
          },
        ],
      },
      { role: 'tool', tool_call_id: call.call_id, content: '{"temp_c": 21}' },
    ]);
    // And a third turn on the first process sees all of it.
    const third = await client(a).responses.create({
      model: 'claude',
      previous_response_id: second.id,
      input: 'Thanks!',
    });
    expect(third.output_text).toContain('Simulated anthropic');
    const last = sim.requests().at(-1)!.body as { messages: { role: string }[] };
    expect(last.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
  });
});
