/**
 * Messages requests to `anthropic` slots (and Claude on Vertex AI) pass through natively: the
 * provider simulator records that Claude received the client's body as written (thinking,
 * cache_control, is_error, tool_result blocks, metadata, betas), merged with what the workflow adds
 * (instructions, session turns, the structured-output instruction, the slot's model); the client
 * gets Claude's answer as Claude sent it (thinking blocks, stop_sequence, cache usage), streamed or
 * not. Failover to another provider type translates; the cache, caps, sessions and request logs see
 * the same usage as on translated requests. Every client call is the official `@anthropic-ai/sdk`.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../harness/gateway.ts';
import {
  API_KEY,
  apiKey,
  baseConfig,
  bedrockProvider,
  NO_AI_SCOPE_KEY,
  project,
  provider,
  SIM_AWS_KEYS,
  simGoogleAccount,
  vertexProvider,
  workflow,
} from '../../harness/manifests.ts';
import { REDACTED_THINKING_TRIGGER } from '../../simulator/anthropic/messages.ts';
import { type Simulator, startSimulator } from '../../simulator/index.ts';
import { spendCap, workflowOf } from '../../spend/manifests.ts';

const SPENDER_KEY = 'sy_live_PassthroughSpenderKey0123456789ab';
const CLAUDE = 'claude-haiku-4-5';
const VERTEX_CLAUDE = 'claude-haiku-4-5@20251001';
const SCHEMA = {
  type: 'object',
  properties: { city: { type: 'string' } },
  required: ['city'],
  additionalProperties: false,
};

let sim: Simulator;
let gw: RunningGateway;

beforeAll(async () => {
  const google = simGoogleAccount();
  sim = await startSimulator({ aws: SIM_AWS_KEYS, google: google.sim });
  gw = await startGateway([
    ...baseConfig(sim.url),
    ...vertexProvider('vtx', sim.url, [VERTEX_CLAUDE, 'gemini-2.5-flash'], google.key(sim.url)),
    ...bedrockProvider('bed', sim.url, ['anthropic.claude-3-5-haiku-20241022-v1:0']),
    ...provider('coh', 'cohere', sim.url, ['command-a-03-2025']),
    workflow('claude', { provider: 'claude', model: CLAUDE }),
    workflow('claude-vertex', { provider: 'vtx', model: VERTEX_CLAUDE }),
    workflow('claude-instructed', {
      provider: 'claude',
      model: CLAUDE,
      systemInstructions: 'Answer as a pirate.',
    }),
    workflow('claude-schema', {
      provider: 'claude',
      model: CLAUDE,
      structuredOutput: { schema: SCHEMA },
    }),
    workflow('claude-session', {
      provider: 'claude',
      model: CLAUDE,
      systemInstructions: 'Remember things.',
      sessionMemory: { enabled: true, ttlSeconds: 600 },
    }),
    workflow('claude-failover', {
      provider: 'claude',
      model: 'fail-503',
      backups: [{ provider: 'oai', model: 'gpt-4o-mini' }],
    }),
    workflow('claude-cut', { provider: 'claude', model: 'cut-2' }),
    workflow('claude-cached', { provider: 'claude', model: CLAUDE, responseCache: { ttlSeconds: 600 } }),
    workflow('gpt', { provider: 'oai', model: 'gpt-4o-mini' }),
    workflow('gpt-cached', { provider: 'oai', model: 'gpt-4o-mini', responseCache: { ttlSeconds: 600 } }),
    workflow('gem', { provider: 'gem', model: 'gemini-2.5-flash' }),
    workflow('bedrock', { provider: 'bed', model: 'anthropic.claude-3-5-haiku-20241022-v1:0' }),
    workflow('cohere', { provider: 'coh', model: 'command-a-03-2025' }),
    project('spender'),
    ...apiKey('spender', SPENDER_KEY, { project: 'spender' }),
    workflowOf('spender', 'spender-claude', { provider: 'claude', model: CLAUDE }),
    spendCap('spender-daily', { project: 'spender', period: 'daily', limitUsd: '0.000001' }),
  ]);
});
afterAll(async () => {
  await gw?.close();
  await sim?.close();
});
beforeEach(() => sim.clearRequests());

const client = (key = API_KEY) =>
  new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0, timeout: 15_000 });

/** What the simulator's Claude (anthropic or Vertex) received, oldest first. */
const received = (provider: 'anthropic' | 'vertex-ai' = 'anthropic') =>
  sim.requests().filter((r) => r.provider === provider);

const WEATHER = {
  name: 'get_weather',
  description: 'Weather for a city.',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
  // One hour, as the system text after it: Claude refuses a one-hour breakpoint after a five-minute one.
  cache_control: { type: 'ephemeral' as const, ttl: '1h' as const },
};
const SYSTEM: Anthropic.TextBlockParam[] = [
  { type: 'text', text: 'You are a weather assistant.' },
  { type: 'text', text: 'Use the tool for every city.', cache_control: { type: 'ephemeral', ttl: '1h' } },
];
const BETAS =
  'interleaved-thinking-2025-05-14,files-api-2025-04-14,oauth-2025-04-20,extended-cache-ttl-2025-04-11';

describe('Claude receives the body as the client wrote it', () => {
  it('a thinking tool loop: thinking blocks, cache_control, is_error and tool_result blocks arrive unchanged', async () => {
    const first: Anthropic.MessageCreateParamsNonStreaming = {
      model: 'claude',
      max_tokens: 4096,
      thinking: { type: 'enabled', budget_tokens: 2048 },
      system: SYSTEM,
      tools: [WEATHER],
      tool_choice: { type: 'auto' },
      metadata: { user_id: 'user-42' },
      // The SDK's types lack top_k; the Messages API takes it.
      ...({ top_k: 40 } as object),
      messages: [{ role: 'user', content: 'Weather in Oslo?' }],
    };
    const m1 = await client().messages.create(first, { headers: { 'anthropic-beta': BETAS } });
    expect(m1.model).toBe('claude');
    expect(m1.content.map((b) => b.type)).toEqual(['thinking', 'tool_use']);
    const thinking = m1.content[0] as Anthropic.ThinkingBlock;
    expect(thinking.thinking).toContain('Simulated reasoning');
    expect(thinking.signature.length).toBeGreaterThan(20);
    expect(m1.stop_reason).toBe('tool_use');

    const [up1] = received();
    const { model: _m, ...rest1 } = first;
    expect(up1!.body).toEqual({ ...rest1, model: CLAUDE });
    // Safe betas are forwarded; the caller's own account (OAuth) and files are not the gateway's.
    expect(up1!.headers['anthropic-beta']).toBe(
      'interleaved-thinking-2025-05-14,extended-cache-ttl-2025-04-11',
    );

    const use = m1.content[1] as Anthropic.ToolUseBlock;
    const second: Anthropic.MessageCreateParamsNonStreaming = {
      ...first,
      stop_sequences: ['NEVER-SEEN'],
      messages: [
        ...first.messages,
        { role: 'assistant', content: m1.content },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: use.id,
              is_error: true,
              content: [
                { type: 'text', text: 'The weather service is down.', cache_control: { type: 'ephemeral' } },
              ],
            },
          ],
        },
      ],
    };
    const m2 = await client().messages.create(second);
    // The simulator checks the signature and that the loop's assistant turn starts with its thinking.
    expect(m2.content.map((b) => b.type)).toEqual(['thinking', 'text']);
    expect(m2.stop_reason).toBe('end_turn');
    const up2 = received()[1]!;
    const { model: _m2, ...rest2 } = second;
    expect(up2.body).toEqual({ ...JSON.parse(JSON.stringify(rest2)), model: CLAUDE });
  });

  it('the same loop on a chat-completions-shaped provider is translated: thinking is not sent', async () => {
    const res = await client().messages.create({
      model: 'gpt',
      max_tokens: 4096,
      thinking: { type: 'enabled', budget_tokens: 2048 },
      messages: [
        { role: 'user', content: 'hi' },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'mine', signature: 'sig' },
            { type: 'text', text: 'Hello.' },
          ],
        },
        { role: 'user', content: 'again' },
      ],
    });
    expect(res.content.map((b) => b.type)).toEqual(['text']);
    const up = sim.requests().find((r) => r.provider === 'openai')!.body as Record<string, unknown>;
    expect(up.messages).toEqual([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'Hello.' },
      { role: 'user', content: 'again' },
    ]);
    expect(up.reasoning_effort).toBe('low');
  });

  it('an altered thinking block is refused by Claude (the gateway does not rebuild it)', async () => {
    const err = await client()
      .messages.create({
        model: 'claude',
        max_tokens: 2048,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        messages: [
          { role: 'user', content: 'hi' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'forged', signature: 'not-a-signature' },
              { type: 'text', text: 'Hello.' },
            ],
          },
          { role: 'user', content: 'again' },
        ],
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(String((err as Error).message)).toContain('Invalid `signature`');
  });

  it('redacted thinking comes back and is accepted back', async () => {
    const ask = {
      model: 'claude',
      max_tokens: 2048,
      thinking: { type: 'enabled' as const, budget_tokens: 1024 },
    };
    const m1 = await client().messages.create({
      ...ask,
      messages: [{ role: 'user', content: REDACTED_THINKING_TRIGGER }],
    });
    expect(m1.content[0]?.type).toBe('redacted_thinking');
    const m2 = await client().messages.create({
      ...ask,
      messages: [
        { role: 'user', content: REDACTED_THINKING_TRIGGER },
        { role: 'assistant', content: m1.content },
        { role: 'user', content: 'thanks' },
      ],
    });
    expect(m2.content.at(-1)?.type).toBe('text');
    expect((received()[1]!.body as { messages: unknown[] }).messages[1]).toEqual({
      role: 'assistant',
      content: JSON.parse(JSON.stringify(m1.content)),
    });
  });

  it('Claude on Vertex AI gets the same body (model in the URL, Vertex version in the body)', async () => {
    const params: Anthropic.MessageCreateParamsNonStreaming = {
      model: 'claude-vertex',
      max_tokens: 2048,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      system: SYSTEM,
      messages: [{ role: 'user', content: 'Hello Vertex' }],
    };
    const m = await client().messages.create(params, {
      headers: { 'anthropic-beta': 'interleaved-thinking-2025-05-14' },
    });
    expect(m.model).toBe('claude-vertex');
    expect(m.content.map((b) => b.type)).toEqual(['thinking', 'text']);
    const [up] = received('vertex-ai');
    const { model: _m, ...rest } = params;
    expect(up!.body).toEqual({ ...rest, anthropic_version: 'vertex-2023-10-16' });
    expect(up!.path).toContain(
      `/publishers/anthropic/models/${encodeURIComponent(VERTEX_CLAUDE)}:rawPredict`,
    );
    expect(up!.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14');
  });
});

describe('what the workflow adds is merged into the native body', () => {
  it('system instructions come first, the client system blocks follow as sent', async () => {
    await client().messages.create({
      model: 'claude-instructed',
      max_tokens: 100,
      system: SYSTEM,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect((received()[0]!.body as { system: unknown }).system).toEqual([
      { type: 'text', text: 'Answer as a pirate.' },
      ...SYSTEM,
    ]);
    // A string system prompt stays a string.
    await client().messages.create({
      model: 'claude-instructed',
      max_tokens: 100,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect((received()[1]!.body as { system: unknown }).system).toBe('Answer as a pirate.\n\nBe brief.');
  });

  it('a structured-output workflow: the schema instruction after the client system; the answer is checked', async () => {
    // The simulated Claude answers prose whatever it is asked: the gateway's check refuses it.
    const err = await client()
      .messages.create({
        model: 'claude-schema',
        max_tokens: 200,
        system: SYSTEM,
        messages: [{ role: 'user', content: 'Weather in Lima?' }],
      })
      .catch((e: unknown) => e);
    expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(502);
    expect(String((err as Error).message)).toContain('not valid JSON');
    const system = (received()[0]!.body as { system: { text: string }[] }).system;
    expect(system.slice(0, 2)).toEqual(SYSTEM);
    expect(system[2]!.text).toContain(JSON.stringify(SCHEMA));
  });

  it('a session: the second turn carries the remembered turns before the client turn, sync then streamed', async () => {
    const { data: first, response } = await client()
      .messages.create({
        model: 'claude-session',
        max_tokens: 2048,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        system: SYSTEM,
        messages: [{ role: 'user', content: 'My name is Ada.' }],
      })
      .withResponse();
    const session = response.headers.get('x-service-session-id')!;
    expect(session).toBeTruthy();
    const firstText = (first.content.find((b) => b.type === 'text') as Anthropic.TextBlock).text;
    const stream = client().messages.stream(
      {
        model: 'claude-session',
        max_tokens: 2048,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        system: SYSTEM,
        messages: [{ role: 'user', content: 'What is my name?' }],
      },
      { headers: { 'x-session-id': session } },
    );
    const second = await stream.finalMessage();
    expect(second.content.map((b) => b.type)).toEqual(['thinking', 'text']);
    const up = received()[1]!.body as Record<string, unknown>;
    expect(up.system).toEqual([{ type: 'text', text: 'Remember things.' }, ...SYSTEM]);
    expect(up.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
    expect(up.messages).toEqual([
      { role: 'user', content: 'My name is Ada.' },
      { role: 'assistant', content: firstText },
      { role: 'user', content: 'What is my name?' },
    ]);
    // The streamed answer was remembered too (its text, tallied from Claude's events).
    const secondText = (second.content.find((b) => b.type === 'text') as Anthropic.TextBlock).text;
    await client().messages.create(
      { model: 'claude-session', max_tokens: 100, messages: [{ role: 'user', content: 'Bye.' }] },
      { headers: { 'x-session-id': session } },
    );
    expect(
      (received()[2]!.body as { messages: { content: unknown }[] }).messages.map((x) => x.content),
    ).toEqual(['My name is Ada.', firstText, 'What is my name?', secondText, 'Bye.']);
  });
});

describe('x-session-id refusals, in Anthropic shape, before any provider call', () => {
  it.each([
    ['a workflow without session memory', 'claude', '0f8fad5b-d9cb-469f-a165-70867728950e', 400],
    ['an unknown session', 'claude-session', '0f8fad5b-d9cb-469f-a165-70867728950e', 422],
  ])('%s', async (_name, model, id, status) => {
    const err = await client()
      .messages.create(
        { model, max_tokens: 50, messages: [{ role: 'user', content: 'x' }] },
        { headers: { 'x-session-id': id } },
      )
      .catch((e: unknown) => e);
    expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(status);
    expect((err as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', param: 'session_id' },
    });
    expect(sim.requests()).toEqual([]);
  });
});

describe("the client gets Claude's answer as Claude sent it", () => {
  it("a stream passes Claude's events (model replaced) and the SDK assembles thinking and text", async () => {
    const stream = client().messages.stream({
      model: 'claude',
      max_tokens: 2048,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [{ role: 'user', content: 'Stream with thinking' }],
    });
    const events: Anthropic.RawMessageStreamEvent[] = [];
    stream.on('streamEvent', (e) => events.push(e));
    const final = await stream.finalMessage();
    expect(events[0]).toMatchObject({ type: 'message_start', message: { model: 'claude' } });
    const deltas = events.flatMap((e) => (e.type === 'content_block_delta' ? [e.delta.type] : []));
    expect(deltas).toEqual(expect.arrayContaining(['thinking_delta', 'signature_delta', 'text_delta']));
    expect(events.slice(-2).map((e) => e.type)).toEqual(['message_delta', 'message_stop']);
    expect(final.model).toBe('claude');
    expect(final.content.map((b) => b.type)).toEqual(['thinking', 'text']);
    const thinking = final.content[0] as Anthropic.ThinkingBlock;
    expect(thinking.signature.length).toBeGreaterThan(20);
    // The streamed thinking block is accepted back by Claude: it arrived whole.
    const next = await client().messages.create({
      model: 'claude',
      max_tokens: 2048,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [
        { role: 'user', content: 'Stream with thinking' },
        { role: 'assistant', content: final.content },
        { role: 'user', content: 'ok' },
      ],
    });
    expect(next.stop_reason).toBe('end_turn');
  });

  it("a stream Claude cuts mid-way ends with an error event, never Claude's message_stop", async () => {
    const stream = client().messages.stream({
      model: 'claude-cut',
      max_tokens: 2048,
      thinking: { type: 'enabled', budget_tokens: 1024 },
      messages: [{ role: 'user', content: 'cut me' }],
    });
    const types: string[] = [];
    stream.on('streamEvent', (e) => types.push(e.type));
    const err = await stream.finalMessage().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(String((err as Error).message)).toContain('api_error');
    expect(types[0]).toBe('message_start');
    expect(types).not.toContain('message_stop');
  });

  it("a stream the gateway fails at its end (off the schema) ends with an error, Claude's closing events held back", async () => {
    const stream = client().messages.stream({
      model: 'claude-schema',
      max_tokens: 200,
      messages: [{ role: 'user', content: 'Weather in Lima?' }],
    });
    const types: string[] = [];
    stream.on('streamEvent', (e) => types.push(e.type));
    const err = await stream.finalMessage().catch((e: unknown) => e);
    expect(String((err as Error).message)).toContain('not valid JSON');
    expect(types).toContain('content_block_stop');
    expect(types).not.toContain('message_delta');
    expect(types).not.toContain('message_stop');
  });

  it.each([false, true])('stop_sequence with its sequence (stream: %s)', async (streamed) => {
    const params = {
      model: 'claude',
      max_tokens: 100,
      stop_sequences: ['NOPE', 'reply'],
      messages: [{ role: 'user' as const, content: 'hi' }],
    };
    const m = streamed
      ? await client().messages.stream(params).finalMessage()
      : await client().messages.create(params);
    expect(m.stop_reason).toBe('stop_sequence');
    expect(m.stop_sequence).toBe('reply');
    expect((m.content[0] as Anthropic.TextBlock).text).toBe('Simulated anthropic/claude-haiku-4-5 ');
  });

  it('usage carries the prompt-cache fields Claude reported', async () => {
    const ask: Anthropic.MessageCreateParamsNonStreaming = {
      model: 'claude',
      max_tokens: 100,
      system: [{ type: 'text', text: 'A prompt cached once.', cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: 'cache this prompt' }],
    };
    const first = await client().messages.create(ask);
    const second = await client().messages.create(ask);
    expect(first.usage.cache_creation_input_tokens).toBeGreaterThan(0);
    expect(first.usage.cache_read_input_tokens).toBe(0);
    expect(second.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens);
    expect(second.usage.cache_creation_input_tokens).toBe(0);
  });
});

describe('stop_sequence on translated providers', () => {
  const ask = (model: string, stops: string[]) =>
    client().messages.create({
      model,
      max_tokens: 100,
      stop_sequences: stops,
      messages: [{ role: 'user', content: 'hi' }],
    });

  it('Bedrock and Cohere say a sequence fired: the only one sent is named; of several, none', async () => {
    for (const wf of ['bedrock', 'cohere']) {
      const one = await ask(wf, ['reply']);
      expect([wf, one.stop_reason, one.stop_sequence]).toEqual([wf, 'stop_sequence', 'reply']);
      const two = await ask(wf, ['NOPE', 'reply']);
      expect([wf, two.stop_reason, two.stop_sequence]).toEqual([wf, 'stop_sequence', null]);
    }
  });

  it('OpenAI and Gemini cannot tell a stop sequence from the end: end_turn', async () => {
    for (const wf of ['gpt', 'gem']) {
      const m = await ask(wf, ['reply']);
      expect([wf, m.stop_reason, m.stop_sequence]).toEqual([wf, 'end_turn', null]);
      expect((m.content[0] as Anthropic.TextBlock).text).not.toContain('reply');
    }
  });
});

describe('top_k on translated providers', () => {
  it('Cohere takes it as k; Bedrock Converse has none and refuses it', async () => {
    const ask = (model: string) =>
      client().messages.create({
        model,
        max_tokens: 100,
        messages: [{ role: 'user', content: 'hi' }],
        ...({ top_k: 40 } as object),
      });
    await ask('cohere');
    expect(sim.requests().find((r) => r.provider === 'cohere')?.body).toMatchObject({ k: 40 });
    const err = await ask('bedrock').catch((e: unknown) => e);
    expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(400);
    const body = (err as InstanceType<typeof Anthropic.APIError>).error as { error: { message: string } };
    expect(body.error.message).toContain('cannot honour the parameter "top_k"');
    expect(sim.requests().filter((r) => r.provider === 'bedrock')).toEqual([]);
  });
});

describe('failover and the cache stay canonical', () => {
  it('anthropic fails, openai answers the translated request, sync and streamed', async () => {
    const params = {
      model: 'claude-failover',
      max_tokens: 4096,
      thinking: { type: 'enabled' as const, budget_tokens: 2048 },
      system: SYSTEM,
      messages: [{ role: 'user' as const, content: 'Fail over please' }],
    };
    const { data, response } = await client().messages.create(params).withResponse();
    expect(response.headers.get('x-service-used-provider')).toBe('oai');
    expect(data.content.map((b) => b.type)).toEqual(['text']);
    expect(data.model).toBe('claude-failover');
    const streamed = await client().messages.stream(params).finalMessage();
    expect(streamed.content.map((b) => b.type)).toEqual(['text']);
    const claude = received();
    expect(claude).toHaveLength(2);
    const oai = sim.requests().filter((r) => r.provider === 'openai');
    expect(oai).toHaveLength(2);
    for (const r of oai)
      expect(r.body).toMatchObject({
        model: 'gpt-4o-mini',
        messages: [
          { role: 'system', content: 'You are a weather assistant.\n\nUse the tool for every city.' },
          { role: 'user', content: 'Fail over please' },
        ],
        reasoning_effort: 'low',
      });
  });

  it('a cache hit is rendered from the canonical answer (text, without thinking), sync and streamed', async () => {
    const params = {
      model: 'claude-cached',
      max_tokens: 2048,
      thinking: { type: 'enabled' as const, budget_tokens: 1024 },
      messages: [{ role: 'user' as const, content: 'cache me' }],
    };
    const miss = await client().messages.create(params).withResponse();
    expect(miss.response.headers.get('x-service-cache')).toBe('miss');
    expect(miss.data.content.map((b) => b.type)).toEqual(['thinking', 'text']);
    const hit = await client().messages.create(params).withResponse();
    expect(hit.response.headers.get('x-service-cache')).toBe('hit');
    expect(hit.data.content).toEqual([miss.data.content[1]]);
    expect(hit.data.usage.output_tokens).toBe(miss.data.usage.output_tokens);
    const replay = await client().messages.stream(params).finalMessage();
    expect(replay.content).toEqual([miss.data.content[1]]);
    expect(received()).toHaveLength(1);
  });
});

describe('no slot speaks Messages: the body as written is not carried', () => {
  it('a Messages request and the same chat completion share one cache entry', async () => {
    const m = await client()
      .messages.create({
        model: 'gpt-cached',
        max_tokens: 100,
        system: SYSTEM,
        messages: [{ role: 'user', content: 'shared entry' }],
      })
      .withResponse();
    expect(m.response.headers.get('x-service-cache')).toBe('miss');
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'gpt-cached',
        max_tokens: 100,
        messages: [
          { role: 'system', content: 'You are a weather assistant.\n\nUse the tool for every city.' },
          { role: 'user', content: 'shared entry' },
        ],
      }),
    });
    expect(res.headers.get('x-service-cache')).toBe('hit');
    expect(sim.requests()).toHaveLength(1);
  });
});

describe('caps and request logs see the usage of a native answer', () => {
  it('a project cap counts the first answer and refuses the next', async () => {
    const ask = {
      model: 'spender-claude',
      max_tokens: 100,
      messages: [{ role: 'user' as const, content: 'x' }],
    };
    await client(SPENDER_KEY).messages.stream(ask).finalMessage();
    const err = await client(SPENDER_KEY)
      .messages.create(ask)
      .catch((e: unknown) => e);
    expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(402);
    expect((err as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
      error: { type: 'budget_exceeded', code: 'project_budget_exceeded' },
    });
  });

  it.each([false, true])(
    'the request-log entry has Claude usage, cache tokens included (stream: %s)',
    async (streamed) => {
      const params = {
        model: 'claude',
        max_tokens: 2048,
        thinking: { type: 'enabled' as const, budget_tokens: 1024 },
        system: SYSTEM,
        messages: [{ role: 'user' as const, content: `log me ${streamed}` }],
      };
      let id: string | null;
      let usage: Anthropic.Usage;
      if (streamed) {
        const s = client().messages.stream(params);
        id = (await s.withResponse()).response.headers.get('x-service-request-log-id');
        usage = (await s.finalMessage()).usage;
      } else {
        const { data, response } = await client().messages.create(params).withResponse();
        usage = data.usage;
        id = response.headers.get('x-service-request-log-id');
      }
      const prompt =
        (usage.input_tokens ?? 0) +
        (usage.cache_creation_input_tokens ?? 0) +
        (usage.cache_read_input_tokens ?? 0);
      interface Entry {
        request_log_id: string;
        usage: { prompt_tokens: number; completion_tokens: number } | null;
        cost_usd: string | null;
      }
      await gw.gateway.state.flush();
      const res = await fetch(`${gw.url}/v1/request-logs?limit=100`, {
        headers: { authorization: `Bearer ${NO_AI_SCOPE_KEY}` },
      });
      const entry = ((await res.json()) as { data: Entry[] }).data.find((e) => e.request_log_id === id);
      expect(entry?.usage).toMatchObject({ prompt_tokens: prompt, completion_tokens: usage.output_tokens });
      expect(Number(entry?.cost_usd)).toBeGreaterThan(0);
    },
  );
});
