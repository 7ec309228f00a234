/**
 * A Messages client's `cache_control` breakpoints on a translated slot: Bedrock takes them as
 * Converse `cachePoint` checkpoints (after the marked tool, system text or turn, with the
 * breakpoint's lifetime), and its cache writes and reads come back priced apart and in Claude's
 * shape, one-hour writes included. Models without checkpoints and OpenAI-shaped slots get a body
 * without them. Chat content parts may carry the same `cache_control` (as routers for Claude take
 * it): on the compatible and native surfaces they reach Claude translated and Bedrock as
 * checkpoints. The simulator's Claude and Bedrock cache marked prefixes as Claude does. Clients are
 * the official SDKs against a gateway on real Redis.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anthropicTurns, systemValue } from '#gateway/providers/anthropic/turns';
import { buildConverseBody, cachePointsOf } from '#gateway/providers/bedrock/request';
import { JSON_ONLY_INSTRUCTION, systemRuns } from '#gateway/providers/common';
import type { ChatRequest } from '#gateway/providers/types';
import type { RunningGateway } from '../harness/gateway.ts';
import { API_KEY, bedrockProvider, provider, workflow } from '../harness/manifests.ts';
import type { RecordedRequest, Simulator } from '../simulator/index.ts';
import {
  CACHE_PRICING,
  logged,
  micros,
  PRICES,
  type Stack,
  sendMessages,
  startStack,
} from './cache-pricing.ts';

const CLAUDE = 'us.anthropic.claude-haiku-4-5-20251001-v1:0';
const NOVA = 'amazon.nova-lite-v1:0';
const LLAMA = 'meta.llama3-1-8b-instruct-v1:0';
const GUIDE = 'You answer questions about the quarterly report, in three short sentences. '.repeat(4);

const chatModels = (names: string[]) => ({
  models: names.map((name) => ({ name, requestTypes: ['chat'], pricing: CACHE_PRICING })),
});

let stack: Stack;
let sim: Simulator;
let gw: RunningGateway;

beforeAll(async () => {
  stack = await startStack((sim) => [
    ...bedrockProvider('bed', sim.url, [], chatModels([CLAUDE, NOVA, LLAMA])),
    ...provider('oai', 'openai', sim.url, [], chatModels(['gpt-4o-mini'])),
    ...provider('anth', 'anthropic', sim.url, [], chatModels(['claude-haiku-4-5'])),
    workflow('claude', { provider: 'bed', model: CLAUDE }),
    workflow('nova', { provider: 'bed', model: NOVA }),
    workflow('llama', { provider: 'bed', model: LLAMA }),
    workflow('gpt', { provider: 'oai', model: 'gpt-4o-mini' }),
    workflow('claude-api', { provider: 'anth', model: 'claude-haiku-4-5' }),
    workflow('claude-session', {
      provider: 'bed',
      model: CLAUDE,
      sessionMemory: { enabled: true, ttlSeconds: 600 },
    }),
  ]);
  ({ sim, gw } = stack);
});

afterAll(() => stack?.close());

const client = () => new Anthropic({ baseURL: gw.url, apiKey: API_KEY, maxRetries: 0, timeout: 15_000 });

const lastUpstream = (provider: RecordedRequest['provider']) =>
  sim
    .requests()
    .filter((r) => r.provider === provider)
    .at(-1)!.body as Record<string, unknown> & {
    system?: Record<string, unknown>[];
    messages: { role: string; content: Record<string, unknown>[] }[];
    toolConfig?: { tools: Record<string, unknown>[] };
  };

const checkpoints = (body: unknown): number => JSON.stringify(body).split('"cachePoint"').length - 1;

const WEATHER: Anthropic.Tool = {
  name: 'weather',
  description: 'The weather in a city.',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const CALENDAR: Anthropic.Tool = {
  name: 'calendar',
  description: 'The board meetings of a quarter.',
  input_schema: { type: 'object', properties: { quarter: { type: 'string' } } },
};

/** A Claude Code-shaped prompt: one-hour breakpoints on the tools and the system, five minutes on the turn. */
const marked = (tag: string): Anthropic.MessageCreateParamsNonStreaming => ({
  model: 'claude',
  max_tokens: 200,
  // The tag in each part makes every prompt's prefixes its own (nothing cached by an earlier test).
  tools: [
    WEATHER,
    {
      ...CALENDAR,
      description: `${CALENDAR.description} ${tag}`,
      cache_control: { type: 'ephemeral', ttl: '1h' },
    },
  ],
  system: [{ type: 'text', text: `${GUIDE} ${tag}`, cache_control: { type: 'ephemeral', ttl: '1h' } }],
  messages: [
    {
      role: 'user',
      content: [
        { type: 'text', text: `${GUIDE} What changed? ${tag}`, cache_control: { type: 'ephemeral' } },
      ],
    },
  ],
});

const send = (params: Anthropic.MessageCreateParamsNonStreaming, streamed: boolean) =>
  sendMessages(client(), params, streamed);

describe('Messages breakpoints on a Bedrock Claude slot', () => {
  it('become cachePoint checkpoints after the marked tool, the system text and the turn', async () => {
    await client().messages.create(marked('shape'));
    const body = lastUpstream('bedrock');
    expect(body.toolConfig?.tools.map((t) => Object.keys(t)[0])).toEqual([
      'toolSpec',
      'toolSpec',
      'cachePoint',
    ]);
    expect(body.toolConfig?.tools[2]).toEqual({ cachePoint: { type: 'default', ttl: '1h' } });
    expect(body.system).toEqual([{ text: `${GUIDE} shape` }, { cachePoint: { type: 'default', ttl: '1h' } }]);
    expect(body.messages[0]!.content).toEqual([
      { text: `${GUIDE} What changed? shape` },
      { cachePoint: { type: 'default' } },
    ]);
  });

  it.each([false, true])(
    'writes are priced by lifetime, reads at the cached price, in Claude usage shape (stream: %s)',
    async (streamed) => {
      // A stream's usage has the writes in all (Claude's message_delta): a non-streamed probe of the
      // same size, on a prefix of its own, gives their split by lifetime.
      const probe = await send(marked(`split ${streamed ? 1 : 0}`), false);
      const params = marked(`price ${streamed ? 1 : 0}`);
      const first = await send(params, streamed);
      const second = await send(params, streamed);
      const written = first.usage.cache_creation_input_tokens ?? 0;
      const hour = probe.usage.cache_creation?.ephemeral_1h_input_tokens ?? 0;
      const minutes = probe.usage.cache_creation?.ephemeral_5m_input_tokens ?? 0;
      expect(first.usage.cache_creation).toEqual(
        streamed ? null : { ephemeral_5m_input_tokens: minutes, ephemeral_1h_input_tokens: hour },
      );
      // The tools and the system text are written for an hour, the turn for five minutes.
      expect(hour).toBeGreaterThan(0);
      expect(minutes).toBeGreaterThan(0);
      expect(hour + minutes).toBe(written);
      expect(first.usage.cache_read_input_tokens).toBe(0);
      expect(second.usage.cache_read_input_tokens).toBe(written);
      expect(second.usage.cache_creation_input_tokens).toBe(0);

      const fresh = first.usage.input_tokens;
      expect(micros(await logged(gw, first.id))).toBe(
        fresh * PRICES.input +
          minutes * PRICES.cacheWrite +
          hour * PRICES.cacheWrite1h +
          first.usage.output_tokens * PRICES.output,
      );
      expect(micros(await logged(gw, second.id))).toBe(
        second.usage.input_tokens * PRICES.input +
          written * PRICES.cachedInput +
          second.usage.output_tokens * PRICES.output,
      );
      console.log(
        `bedrock claude (stream: ${streamed}): wrote ${minutes} + ${hour} (1h) tokens, read ${written} on the repeat`,
      );
    },
  );

  it("a tool result's breakpoint lands right after that result, before the turn's text", async () => {
    await client().messages.create({
      model: 'claude',
      max_tokens: 200,
      tools: [WEATHER],
      messages: [
        { role: 'user', content: 'Weather in Lima?' },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'toolu_lima', name: 'weather', input: { city: 'Lima' } }],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_lima',
              content: '19 °C',
              cache_control: { type: 'ephemeral' },
            },
            { type: 'text', text: 'And tomorrow?' },
          ],
        },
      ],
    });
    const turn = lastUpstream('bedrock').messages[2]!;
    expect(turn.content.map((b) => Object.keys(b)[0])).toEqual(['toolResult', 'cachePoint', 'text']);
  });

  it('a session replays its earlier turns without their breakpoints', async () => {
    const turn = (text: string): Anthropic.MessageParam => ({
      role: 'user',
      content: [{ type: 'text', text, cache_control: { type: 'ephemeral' } }],
    });
    const { response } = await client()
      .messages.create({ model: 'claude-session', max_tokens: 200, messages: [turn('My name is Ada.')] })
      .withResponse();
    const session = response.headers.get('x-service-session-id')!;
    expect(session).toBeTruthy();
    await client().messages.create(
      { model: 'claude-session', max_tokens: 200, messages: [turn('What is my name?')] },
      { headers: { 'x-session-id': session } },
    );
    const body = lastUpstream('bedrock');
    expect(body.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user']);
    expect(checkpoints(body)).toBe(1);
    expect(body.messages[2]!.content.at(-1)).toEqual({ cachePoint: { type: 'default' } });
  });
});

describe('slots that take no or fewer checkpoints', () => {
  it('Nova: checkpoints after the system text and turns, none among the tools', async () => {
    await client().messages.create({ ...marked('nova'), model: 'nova' });
    const body = lastUpstream('bedrock');
    expect(body.toolConfig?.tools.map((t) => Object.keys(t)[0])).toEqual(['toolSpec', 'toolSpec']);
    expect(body.system?.at(-1)).toEqual({ cachePoint: { type: 'default', ttl: '1h' } });
    expect(body.messages[0]!.content.at(-1)).toEqual({ cachePoint: { type: 'default' } });
  });

  it('a Bedrock model without prompt caching: the breakpoints are dropped, the request answered', async () => {
    const m = await client().messages.create({ ...marked('llama'), model: 'llama' });
    expect(m.content.length).toBeGreaterThan(0);
    const body = lastUpstream('bedrock');
    expect(checkpoints(body)).toBe(0);
    expect(body.system).toEqual([{ text: `${GUIDE} llama` }]);
    expect(m.usage.cache_creation).toEqual({ ephemeral_5m_input_tokens: 0, ephemeral_1h_input_tokens: 0 });
  });

  it('an OpenAI slot: no breakpoint field reaches Chat Completions', async () => {
    const m = await client().messages.create({ ...marked('gpt'), model: 'gpt' });
    expect(m.content.length).toBeGreaterThan(0);
    const body = lastUpstream('openai');
    expect(JSON.stringify(body)).not.toContain('"cache"');
    expect((body.messages as unknown[]).length).toBe(2);
  });
});

/** Chat messages whose system and user parts carry breakpoints (a field OpenAI's types lack). */
const partsMarked = (tag: string) =>
  [
    {
      role: 'system',
      content: [{ type: 'text', text: `${GUIDE} ${tag}`, cache_control: { type: 'ephemeral', ttl: '1h' } }],
    },
    {
      role: 'user',
      content: [
        { type: 'text', text: `${GUIDE} What changed? ${tag}`, cache_control: { type: 'ephemeral' } },
        { type: 'text', text: 'Answer briefly.' },
      ],
    },
  ] as unknown as OpenAI.ChatCompletionMessageParam[];

const openai = () => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: API_KEY, maxRetries: 0, timeout: 15_000 });

describe('cache_control on chat content parts (compatible and native surfaces)', () => {
  it('Claude: breakpoints on the system text and the turn end, read back as cached tokens', async () => {
    const ask = () =>
      openai()
        .chat.completions.create({ model: 'claude-api', messages: partsMarked('compat') })
        .withResponse();
    const first = await ask();
    const body = lastUpstream('anthropic') as unknown as {
      system: unknown;
      messages: { content: unknown }[];
    };
    expect(body.system).toEqual([
      { type: 'text', text: `${GUIDE} compat`, cache_control: { type: 'ephemeral', ttl: '1h' } },
    ]);
    // The breakpoint moves to the end of its message.
    expect(body.messages[0]!.content).toEqual([
      { type: 'text', text: `${GUIDE} What changed? compat` },
      { type: 'text', text: 'Answer briefly.', cache_control: { type: 'ephemeral' } },
    ]);
    const second = await ask();
    const cached = second.data.usage?.prompt_tokens_details?.cached_tokens ?? 0;
    expect(first.data.usage?.prompt_tokens_details?.cached_tokens ?? 0).toBe(0);
    expect(cached).toBeGreaterThan(0);
    expect(second.data.usage?.prompt_tokens).toBe(first.data.usage?.prompt_tokens);
    // The written prefix costs more than fresh input; read back, a tenth of it.
    const [a, b] = [
      micros(await logged(gw, first.response.headers.get('x-service-request-log-id'))),
      micros(await logged(gw, second.response.headers.get('x-service-request-log-id'))),
    ];
    expect(b).toBeLessThan(a);
    console.log(`compat → claude: ${cached} cached tokens on the repeat; ${a} → ${b} µUSD`);
  });

  it('Bedrock Claude: checkpoints after the system text and the turn', async () => {
    await openai().chat.completions.create({ model: 'claude', messages: partsMarked('compat bedrock') });
    const body = lastUpstream('bedrock');
    expect(body.system?.at(-1)).toEqual({ cachePoint: { type: 'default', ttl: '1h' } });
    expect(body.messages[0]!.content.map((b) => Object.keys(b)[0])).toEqual(['text', 'text', 'cachePoint']);
  });

  it('OpenAI: the parts reach Chat Completions without the field', async () => {
    await openai().chat.completions.create({ model: 'gpt', messages: partsMarked('compat gpt') });
    const body = lastUpstream('openai');
    expect(JSON.stringify(body)).not.toContain('cache');
    expect(body.messages[1]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: `${GUIDE} What changed? compat gpt` },
        { type: 'text', text: 'Answer briefly.' },
      ],
    });
  });

  it('the native surface takes them as the compatible one does', async () => {
    const res = await fetch(`${gw.url}/v1/ai`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ workflow: 'claude-api', messages: partsMarked('native') }),
    });
    expect(res.status).toBe(200);
    const body = lastUpstream('anthropic') as unknown as { system: { cache_control?: unknown }[] };
    expect(body.system[0]!.cache_control).toEqual({ type: 'ephemeral', ttl: '1h' });
  });
});

describe("at most four breakpoints, Claude's limit, on every surface and route", () => {
  const LIMIT_MESSAGE = 'A maximum of 4 blocks with cache_control may be provided. Found 5.';
  const ORDER_MESSAGE =
    "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. Note that blocks are processed in the following order: `tools`, `system`, `messages`.";
  /** `marks` user turns each ending in a marked text block, answered in between. */
  const markedTurns = (marks: number, tag: string): Anthropic.MessageParam[] =>
    Array.from({ length: marks }, (_, i): Anthropic.MessageParam[] => [
      ...(i > 0 ? [{ role: 'assistant' as const, content: `Answer ${i}.` }] : []),
      {
        role: 'user',
        content: [
          { type: 'text', text: `${GUIDE} Question ${i} ${tag}`, cache_control: { type: 'ephemeral' } },
        ],
      },
    ]).flat();
  const upstreamCount = () => sim.requests().length;

  it("Messages: five are refused in Claude's words before any provider is called; four are sent", async () => {
    for (const model of ['claude', 'claude-api']) {
      const before = upstreamCount();
      const err = await client()
        .messages.create({ model, max_tokens: 100, messages: markedTurns(5, `limit ${model}`) })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Anthropic.BadRequestError);
      const e = err as InstanceType<typeof Anthropic.BadRequestError>;
      expect(e.error).toMatchObject({
        type: 'error',
        error: { type: 'invalid_request_error', message: LIMIT_MESSAGE },
      });
      expect(upstreamCount()).toBe(before);
    }
    await client().messages.create({
      model: 'claude',
      max_tokens: 100,
      messages: markedTurns(4, 'limit four'),
    });
    expect(checkpoints(lastUpstream('bedrock'))).toBe(4);
  });

  it('count_tokens: five are refused as /v1/messages refuses them; four are counted', async () => {
    const err = await client()
      .messages.countTokens({ model: 'claude', messages: markedTurns(5, 'count five') })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect((err as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', message: LIMIT_MESSAGE },
    });
    const order = await client()
      .messages.countTokens({
        model: 'claude',
        tools: [{ name: 'lookup', input_schema: { type: 'object' }, cache_control: { type: 'ephemeral' } }],
        messages: [
          {
            role: 'user',
            content: [{ type: 'text', text: 'Q?', cache_control: { type: 'ephemeral', ttl: '1h' } }],
          },
        ],
      })
      .catch((e: unknown) => e);
    expect(order).toBeInstanceOf(Anthropic.BadRequestError);
    expect((order as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
      error: { type: 'invalid_request_error', message: ORDER_MESSAGE },
    });
    const four = await client().messages.countTokens({
      model: 'claude',
      messages: markedTurns(4, 'count four'),
    });
    expect(four.input_tokens).toBeGreaterThan(0);
  });

  it('chat content parts: five marked parts are refused, two in one message counted apart, whatever the slot', async () => {
    const parts = partsMarked('limit compat');
    const user = parts[1] as unknown as { content: Record<string, unknown>[] };
    user.content[1]!.cache_control = { type: 'ephemeral' };
    const more = [
      ...parts,
      { role: 'assistant', content: 'The margin.' },
      { role: 'user', content: [{ type: 'text', text: 'Why?', cache_control: { type: 'ephemeral' } }] },
      { role: 'assistant', content: 'Costs fell.' },
      { role: 'user', content: [{ type: 'text', text: 'And next?', cache_control: { type: 'ephemeral' } }] },
    ] as unknown as OpenAI.ChatCompletionMessageParam[];
    for (const model of ['claude-api', 'gpt']) {
      const before = upstreamCount();
      const err = await openai()
        .chat.completions.create({ model, messages: more })
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      const e = err as InstanceType<typeof OpenAI.BadRequestError>;
      expect(e.message).toContain(LIMIT_MESSAGE);
      expect(e.param).toBe('messages');
      expect(upstreamCount()).toBe(before);
    }
    const native = await fetch(`${gw.url}/v1/ai`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ workflow: 'claude', messages: more }),
    });
    expect(native.status).toBe(400);
    expect(await native.text()).toContain(LIMIT_MESSAGE);
  });

  it('a one-hour breakpoint after a five-minute one is refused, in the order Claude reads them', async () => {
    const before = upstreamCount();
    const err = await client()
      .messages.create({
        model: 'claude',
        max_tokens: 100,
        system: [{ type: 'text', text: `${GUIDE} order`, cache_control: { type: 'ephemeral' } }],
        messages: [
          {
            role: 'user',
            content: [{ type: 'text', text: 'Q?', cache_control: { type: 'ephemeral', ttl: '1h' } }],
          },
        ],
      })
      .catch((e: unknown) => e);
    expect((err as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
      error: { type: 'invalid_request_error', message: ORDER_MESSAGE },
    });
    // A chat client's late system message is system text to Claude, read before every turn: its
    // five-minute mark lands before the turn's one-hour one.
    const chat = [
      {
        role: 'user',
        content: [{ type: 'text', text: 'Q?', cache_control: { type: 'ephemeral', ttl: '1h' } }],
      },
      {
        role: 'system',
        content: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      },
    ] as unknown as OpenAI.ChatCompletionMessageParam[];
    const compat = await openai()
      .chat.completions.create({ model: 'claude-api', messages: chat })
      .catch((e: unknown) => e);
    expect(compat).toBeInstanceOf(OpenAI.BadRequestError);
    expect((compat as InstanceType<typeof OpenAI.BadRequestError>).message).toContain(ORDER_MESSAGE);
    expect(upstreamCount()).toBe(before);
    // Marked the other way round, the conversation reads five minutes then an hour, but Claude reads
    // the one-hour system text first: accepted.
    const swapped = [
      { role: 'user', content: [{ type: 'text', text: 'Q?', cache_control: { type: 'ephemeral' } }] },
      {
        role: 'system',
        content: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral', ttl: '1h' } }],
      },
    ] as unknown as OpenAI.ChatCompletionMessageParam[];
    await openai().chat.completions.create({ model: 'claude-api', messages: swapped });
    expect(upstreamCount()).toBe(before + 1);
  });

  /** A Messages request straight to the simulator's Claude, not through the gateway. */
  const toSimulator = (body: Record<string, unknown>) =>
    fetch(`${sim.url}/v1/messages`, {
      method: 'POST',
      headers: {
        'x-api-key': 'sk-test',
        'anthropic-version': '2023-06-01',
        'content-type': 'application/json',
      },
      body: JSON.stringify({ model: 'claude-haiku-4-5', max_tokens: 50, ...body }),
    });

  it("the simulator's Claude refuses five, and a late one-hour mark, as Claude does", async () => {
    const res = await toSimulator({ messages: markedTurns(5, 'limit sim') });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      error: { type: 'invalid_request_error', message: LIMIT_MESSAGE },
    });
    const late = await toSimulator({
      system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
      messages: [
        {
          role: 'user',
          content: [{ type: 'text', text: 'Q?', cache_control: { type: 'ephemeral', ttl: '1h' } }],
        },
      ],
    });
    expect(late.status).toBe(400);
    expect(await late.json()).toMatchObject({ error: { message: ORDER_MESSAGE } });
  });
});

describe('system texts split at their breakpoints', () => {
  const hour = { ttl: '1h' as const };
  it('one run without breakpoints; a run per breakpoint, the rest after the last', () => {
    expect(systemRuns([{ text: 'a' }, { text: 'b' }])).toEqual([{ text: 'a\n\nb' }]);
    expect(
      systemRuns([{ text: 'a', cache: hour }, { text: 'b' }, { text: 'c', cache: {} }, { text: 'd' }]),
    ).toEqual([{ text: 'a', cache: hour }, { text: 'b\n\nc', cache: {} }, { text: 'd' }]);
  });

  it('a breakpoint with no text since the last ends the same prefix; one before any text marks nothing', () => {
    expect(
      systemRuns([
        { text: 'a', cache: {} },
        { text: '', cache: hour },
      ]),
    ).toEqual([{ text: 'a', cache: hour }]);
    expect(systemRuns([{ text: '', cache: hour }, { text: 'a' }])).toEqual([{ text: 'a' }]);
  });

  it('Bedrock and Claude bodies from the same runs: checkpoint blocks, or cache_control on text blocks', () => {
    const req: ChatRequest = {
      kind: 'chat',
      messages: [
        { role: 'system', content: 'rules', cache: hour },
        { role: 'system', content: 'more' },
        { role: 'user', content: 'hi' },
      ],
      json: true,
    };
    const converse = JSON.parse(buildConverseBody(req, cachePointsOf(CLAUDE))) as { system: unknown };
    expect(converse.system).toEqual([
      { text: 'rules' },
      { cachePoint: { type: 'default', ttl: '1h' } },
      { text: `more\n\n${JSON_ONLY_INSTRUCTION}` },
    ]);
    expect(systemValue(anthropicTurns(req.messages).system)).toEqual([
      { type: 'text', text: 'rules', cache_control: { type: 'ephemeral', ttl: '1h' } },
      { type: 'text', text: 'more' },
    ]);
  });
});
