/**
 * The Conversations API and POST /v1/responses/input_tokens with the official `openai` SDK, against
 * three real gateway processes on one Redis in front of the provider simulator: every call of
 * `client.conversations`, `responses.create({conversation})` continued on another process right
 * after each answer (streamed and not), the token count, and another project's ids.
 */
import { Redis } from 'ioredis';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startRedis } from '#devkit/redis';
import { CONVERSATION_KEYS } from '#gateway/conversations/keys';
import { type RunningGateway, startGateway } from '../../harness/gateway.ts';
import { API_KEY, baseConfig, OTHER_KEY, PROJECT_ID, workflow } from '../../harness/manifests.ts';
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
let c: RunningGateway;

const manifests = (simUrl: string) => [
  ...baseConfig(simUrl),
  workflow('assistant', { provider: 'oai', model: 'gpt-4o-mini' }),
  workflow('claude', { provider: 'claude', model: 'claude-haiku-4-5' }),
  workflowOf('other', 'other-assistant', { provider: 'oai', model: 'gpt-4o-mini' }),
];

beforeAll(async () => {
  sim = await startSimulator();
  redis = await startRedis();
  a = await startGateway(manifests(sim.url), { redisUrl: redis.url });
  b = await startGateway(manifests(sim.url), { redisUrl: redis.url });
  c = await startGateway(manifests(sim.url), { redisUrl: redis.url });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await c?.close();
  await redis?.stop();
  await sim?.close();
});
beforeEach(() => sim.clearRequests());

const client = (gw: RunningGateway = a, key = API_KEY) =>
  new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0, timeout: 15_000 });

const rolesSent = (): string[] =>
  (sim.requests().at(-1)!.body as { messages: { role: string }[] }).messages.map((m) => m.role);

describe('conversations', () => {
  it('create, retrieve, update and delete, from either process', async () => {
    const conv = await client(a).conversations.create({
      metadata: { topic: 'demo' },
      items: [{ type: 'message', role: 'user', content: 'Hello there' }],
    });
    expect(conv.id).toMatch(/^conv_/);
    expect(conv).toMatchObject({ object: 'conversation', metadata: { topic: 'demo' } });
    expect(await client(b).conversations.retrieve(conv.id)).toEqual(conv);
    const updated = await client(b).conversations.update(conv.id, { metadata: { topic: 'other' } });
    expect(updated).toEqual({ ...conv, metadata: { topic: 'other' } });
    expect(await client(a).conversations.retrieve(conv.id)).toEqual(updated);
    expect(await client(a).conversations.delete(conv.id)).toEqual({
      id: conv.id,
      object: 'conversation.deleted',
      deleted: true,
    });
    await expect(client(b).conversations.retrieve(conv.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(client(b).conversations.delete(conv.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('items: create, list (order, limit, after), retrieve and delete', async () => {
    const conv = await client().conversations.create();
    expect(conv.metadata).toEqual({});
    const added = await client(b).conversations.items.create(conv.id, {
      items: [
        { type: 'message', role: 'user', content: 'one' },
        { type: 'message', role: 'assistant', content: 'two' },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'three' }] },
      ],
    });
    expect(added.object).toBe('list');
    expect(added.data).toHaveLength(3);
    expect(added.data[0]).toMatchObject({
      type: 'message',
      role: 'user',
      status: 'completed',
      content: [{ type: 'input_text', text: 'one' }],
    });
    expect(added.data[1]).toMatchObject({
      role: 'assistant',
      content: [{ type: 'output_text', text: 'two' }],
    });
    const ids = added.data.map((i) => i.id);
    const desc = await client(a).conversations.items.list(conv.id);
    expect(desc.data.map((i) => i.id)).toEqual([...ids].reverse());
    expect(desc.has_more).toBe(false);
    const page = await client(a).conversations.items.list(conv.id, { order: 'asc', limit: 2 });
    expect(page.data.map((i) => i.id)).toEqual(ids.slice(0, 2));
    expect(page.has_more).toBe(true);
    const rest = await client(a).conversations.items.list(conv.id, { order: 'asc', after: ids[1] });
    expect(rest.data.map((i) => i.id)).toEqual([ids[2]]);
    // The SDK's auto-pagination follows `after` over the pages.
    const all: string[] = [];
    for await (const item of client(b).conversations.items.list(conv.id, { order: 'asc', limit: 1 }))
      all.push(item.id!);
    expect(all).toEqual(ids);
    expect(await client(b).conversations.items.retrieve(ids[1]!, { conversation_id: conv.id })).toEqual(
      added.data[1],
    );
    const after = await client(a).conversations.items.delete(ids[1]!, { conversation_id: conv.id });
    expect(after).toEqual(conv);
    await expect(
      client(b).conversations.items.retrieve(ids[1]!, { conversation_id: conv.id }),
    ).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect((await client(b).conversations.items.list(conv.id)).data.map((i) => i.id)).toEqual([
      ids[2],
      ids[0],
    ]);
  });

  it('kept in Redis under the project for its stored-responses retention (default 30 days)', async () => {
    const conv = await client().conversations.create({ items: [{ role: 'user', content: 'keep me' }] });
    const redisClient = new Redis(redis.url);
    try {
      for (const key of [
        CONVERSATION_KEYS.conversation(PROJECT_ID, conv.id),
        CONVERSATION_KEYS.items(PROJECT_ID, conv.id),
      ]) {
        const ttl = await redisClient.pttl(key);
        expect(ttl).toBeGreaterThan(30 * 86_400_000 - 60_000);
        expect(ttl).toBeLessThanOrEqual(30 * 86_400_000);
      }
    } finally {
      redisClient.disconnect();
    }
  });

  it("another project's conversation is a 404 everywhere", async () => {
    const conv = await client().conversations.create({
      items: [{ type: 'message', role: 'user', content: 'mine' }],
    });
    const other = client(b, OTHER_KEY);
    const attempts: (() => Promise<unknown>)[] = [
      () => other.conversations.retrieve(conv.id),
      () => other.conversations.update(conv.id, { metadata: { a: 'b' } }),
      () => other.conversations.items.list(conv.id),
      () => other.conversations.items.create(conv.id, { items: [{ role: 'user', content: 'x' }] }),
      () => other.responses.create({ model: 'other-assistant', input: 'x', conversation: conv.id }),
      () => other.conversations.delete(conv.id),
    ];
    for (const attempt of attempts) await expect(attempt()).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect((await client(a).conversations.items.list(conv.id)).data).toHaveLength(1);
  });
});

describe('responses.create({conversation})', () => {
  it('each turn is appended before its answer; another process continues right after', async () => {
    const conv = await client(a).conversations.create({
      items: [{ type: 'message', role: 'developer', content: 'Answer briefly.' }],
    });
    const pods = [a, b, c, a, c, b, a];
    let continued = 0;
    for (const [i, gw] of pods.entries()) {
      const r = await client(gw).responses.create({
        model: i % 2 ? 'claude' : 'assistant',
        input: `turn ${i}`,
        conversation: i % 2 ? { id: conv.id } : conv.id,
      });
      expect(r.status).toBe('completed');
      expect(r.conversation).toEqual({ id: conv.id });
      // The prompt held every earlier turn: the developer item (Anthropic's system field) and two
      // items a turn.
      expect(rolesSent()).toHaveLength((i % 2 ? 0 : 1) + 2 * i + 1);
      if (i > 0) continued++;
    }
    const items = await client(b).conversations.items.list(conv.id, { order: 'asc', limit: 100 });
    expect(items.data).toHaveLength(1 + 2 * pods.length);
    expect(items.data.at(-1)).toMatchObject({ type: 'message', role: 'assistant' });
    console.log(
      `conversation continued on another of 3 processes ${continued} times, ${items.data.length} items`,
    );
  });

  it('a streamed turn is appended before response.completed; a tool round trip carries over', async () => {
    const conv = await client(a).conversations.create();
    const stream = await client(a).responses.create({
      model: 'assistant',
      input: 'Weather in Paris?',
      tools: [WEATHER],
      conversation: conv.id,
      stream: true,
    });
    let call: { call_id: string } | undefined;
    for await (const ev of stream)
      if (ev.type === 'response.completed')
        call = ev.response.output.find((o) => o.type === 'function_call') as { call_id: string };
    expect(call).toBeDefined();
    const next = await client(b).responses.create({
      model: 'assistant',
      tools: [WEATHER],
      conversation: conv.id,
      input: [{ type: 'function_call_output', call_id: call!.call_id, output: '{"temp":21}' }],
    });
    expect(next.status).toBe('completed');
    expect(next.output[0]).toMatchObject({ type: 'message' });
    expect(rolesSent()).toEqual(['user', 'assistant', 'tool']);
    const types = (await client(a).conversations.items.list(conv.id, { order: 'asc' })).data.map(
      (i) => i.type,
    );
    expect(types).toEqual(['message', 'function_call', 'function_call_output', 'message']);
  });

  it('conversation and previous_response_id together are refused', async () => {
    const conv = await client().conversations.create();
    const r = await client().responses.create({ model: 'assistant', input: 'x' });
    const err = await client()
      .responses.create({ model: 'assistant', input: 'y', conversation: conv.id, previous_response_id: r.id })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    expect((err as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('conversation');
    expect(sim.requests()).toHaveLength(1);
  });
});

describe('responses.inputTokens.count', () => {
  it('counts the input as the primary slot would bill it, marked as an estimate', async () => {
    const short = await client().responses.inputTokens.count({ model: 'assistant', input: 'Hi' });
    expect(short).toEqual({ object: 'response.input_tokens', input_tokens: expect.any(Number) });
    const long = await client().responses.inputTokens.count({
      model: 'assistant',
      input: 'Hi, tell me everything about the weather in Paris this week.',
      instructions: 'Be brief.',
      tools: [WEATHER],
    });
    expect(long.input_tokens).toBeGreaterThan(short.input_tokens + 20);
    const raw = await client().responses.inputTokens.count({ model: 'claude', input: 'Hi' }).withResponse();
    expect(raw.response.headers.get('x-service-token-count')).toBe('estimate');
    expect(sim.requests()).toEqual([]);
  });

  it('counts the conversation or the previous response it continues', async () => {
    const conv = await client().conversations.create({
      items: [
        { type: 'message', role: 'user', content: 'A fairly long first message of this conversation.' },
      ],
    });
    const alone = await client().responses.inputTokens.count({ model: 'assistant', input: 'next' });
    const withConv = await client(b).responses.inputTokens.count({
      model: 'assistant',
      input: 'next',
      conversation: conv.id,
    });
    expect(withConv.input_tokens).toBeGreaterThan(alone.input_tokens + 5);
    const r = await client().responses.create({ model: 'assistant', input: 'A first message, answered.' });
    const withPrev = await client(b).responses.inputTokens.count({
      model: 'assistant',
      input: 'next',
      previous_response_id: r.id,
    });
    expect(withPrev.input_tokens).toBeGreaterThan(alone.input_tokens + 5);
    const onlyConv = await client().responses.inputTokens.count({
      model: 'assistant',
      conversation: conv.id,
    });
    expect(onlyConv.input_tokens).toBeGreaterThan(5);
  });
});
