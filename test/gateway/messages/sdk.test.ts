/**
 * POST /v1/messages and /v1/messages/count_tokens with the official `@anthropic-ai/sdk` against a
 * real gateway in front of the provider simulator: create, stream, a tool_use / tool_result round
 * trip, count_tokens, and the SDK's error classes for the gateway's refusals.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../harness/gateway.ts';
import { API_KEY, apiKey, baseConfig, NO_AI_SCOPE_KEY, workflow } from '../../harness/manifests.ts';
import { type Simulator, startSimulator } from '../../simulator/index.ts';

let sim: Simulator;
let gw: RunningGateway;

beforeAll(async () => {
  sim = await startSimulator();
  gw = await startGateway([
    ...baseConfig(sim.url),
    ...apiKey('console-only', NO_AI_SCOPE_KEY, { scopes: ['console'] }),
    workflow('claude', { provider: 'claude', model: 'claude-haiku-4-5' }),
    workflow('gpt', { provider: 'oai', model: 'gpt-4o-mini' }),
    workflow('gem', { provider: 'gem', model: 'gemini-2.5-flash' }),
    workflow('broken', {
      provider: 'oai',
      model: 'fail-503',
      backups: [{ provider: 'gem', model: 'fail-503' }],
    }),
    workflow('cut', { provider: 'oai', model: 'cut-2' }),
  ]);
});
afterAll(async () => {
  await gw?.close();
  await sim?.close();
});
beforeEach(() => sim.clearRequests());

const client = (opts: { key?: string; bearer?: boolean } = {}) =>
  opts.bearer
    ? new Anthropic({
        baseURL: gw.url,
        apiKey: null,
        authToken: opts.key ?? API_KEY,
        maxRetries: 0,
        timeout: 15_000,
      })
    : new Anthropic({ baseURL: gw.url, apiKey: opts.key ?? API_KEY, maxRetries: 0, timeout: 15_000 });

const WEATHER: Anthropic.Tool = {
  name: 'get_weather',
  description: 'Weather for a city.',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

describe('messages.create', () => {
  it.each(['claude', 'gpt', 'gem'])('answers on workflow %s with the workflow as model', async (model) => {
    const msg = await client().messages.create({
      model,
      max_tokens: 256,
      system: 'Be brief.',
      messages: [{ role: 'user', content: 'Hello there' }],
    });
    expect(msg.id).toMatch(/^msg_/);
    expect(msg).toMatchObject({ type: 'message', role: 'assistant', model, stop_reason: 'end_turn' });
    expect(msg.content[0]?.type).toBe('text');
    expect(msg.usage.input_tokens).toBeGreaterThan(0);
    expect(msg.usage.output_tokens).toBeGreaterThan(0);
  });

  it('takes Authorization: Bearer as well as x-api-key', async () => {
    const msg = await client({ bearer: true }).messages.create({
      model: 'claude',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(msg.content[0]?.type).toBe('text');
  });

  it('streams Anthropic events the SDK assembles into the same message', async () => {
    const stream = client().messages.stream({
      model: 'gpt',
      max_tokens: 128,
      messages: [{ role: 'user', content: 'Stream this' }],
    });
    const types: string[] = [];
    stream.on('streamEvent', (e) => types.push(e.type));
    const final = await stream.finalMessage();
    expect(types[0]).toBe('message_start');
    expect(types.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    expect(types).toContain('content_block_delta');
    expect(final.content[0]?.type === 'text' && final.content[0].text).toContain(
      'Simulated openai/gpt-4o-mini',
    );
    expect(final.stop_reason).toBe('end_turn');
    expect(final.usage.output_tokens).toBeGreaterThan(0);
  });

  it('a tool_use / tool_result round trip', async () => {
    const first = await client().messages.create({
      model: 'gpt',
      max_tokens: 256,
      tools: [WEATHER],
      messages: [{ role: 'user', content: 'Weather in Oslo?' }],
    });
    expect(first.stop_reason).toBe('tool_use');
    const use = first.content.find((b) => b.type === 'tool_use');
    if (use?.type !== 'tool_use') throw new Error('no tool_use');
    expect(use.name).toBe('get_weather');
    expect(typeof use.input).toBe('object');
    const second = await client().messages.create({
      model: 'gpt',
      max_tokens: 256,
      tools: [WEATHER],
      messages: [
        { role: 'user', content: 'Weather in Oslo?' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '3°C, snow' }] },
      ],
    });
    expect(second.stop_reason).toBe('end_turn');
    const upstream = sim.requests().at(-1)!.body as { messages: unknown[] };
    expect(upstream.messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: use.id,
            type: 'function',
            function: { name: 'get_weather', arguments: JSON.stringify(use.input) },
          },
        ],
      },
      { role: 'tool', tool_call_id: use.id, content: '3°C, snow' },
    ]);
  });

  it('streams a tool call as a tool_use block with input_json_delta', async () => {
    const stream = client().messages.stream({
      model: 'claude',
      max_tokens: 256,
      tools: [WEATHER],
      tool_choice: { type: 'tool', name: 'get_weather' },
      messages: [{ role: 'user', content: 'Weather in Rome?' }],
    });
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    const use = final.content.find((b) => b.type === 'tool_use');
    expect(use).toMatchObject({ type: 'tool_use', name: 'get_weather' });
    expect(use?.type === 'tool_use' && typeof (use.input as { city?: unknown }).city).toBe('string');
  });
});

describe('count_tokens', () => {
  it('counts the prompt', async () => {
    const small = await client().messages.countTokens({
      model: 'claude',
      messages: [{ role: 'user', content: 'hi' }],
    });
    const big = await client().messages.countTokens({
      model: 'claude',
      system: 'You are a helpful assistant with a long system prompt.',
      tools: [WEATHER],
      messages: [{ role: 'user', content: 'hi '.repeat(200) }],
    });
    expect(small.input_tokens).toBeGreaterThan(0);
    expect(big.input_tokens).toBeGreaterThan(small.input_tokens + 100);
    expect(sim.requests()).toEqual([]);
  });
});

describe('errors are the SDK error classes', () => {
  it('no key: AuthenticationError', async () => {
    const err = await client({ key: 'sy_live_NotAKnownKey0123456789abcdefghij' })
      .messages.create({ model: 'claude', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
    expect((err as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
      type: 'error',
      error: { type: 'authentication_error' },
    });
  });

  it('a key without the ai scope: PermissionDeniedError', async () => {
    const err = await client({ key: NO_AI_SCOPE_KEY })
      .messages.create({ model: 'claude', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.PermissionDeniedError);
  });

  it('unknown workflow: NotFoundError', async () => {
    const err = await client()
      .messages.create({ model: 'nope', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.NotFoundError);
    expect((err as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
      type: 'error',
      error: { type: 'not_found_error' },
    });
  });

  it('missing max_tokens: BadRequestError naming it', async () => {
    const err = await client()
      .messages.create({ model: 'claude', messages: [{ role: 'user', content: 'x' }] } as never)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect((err as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
      type: 'error',
      error: { type: 'invalid_request_error', param: 'max_tokens' },
    });
  });

  it('every provider failed: InternalServerError (502 api_error)', async () => {
    const err = await client()
      .messages.create({ model: 'broken', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.InternalServerError);
    expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(502);
  });

  it('a stream cut after it started ends with an error event the SDK raises', async () => {
    const stream = client().messages.stream({
      model: 'cut',
      max_tokens: 64,
      messages: [{ role: 'user', content: 'x' }],
    });
    const err = await stream.finalMessage().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(String((err as Error).message)).toContain('api_error');
  });
});
