import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { getAdapter } from '#gateway/providers/registry';
import type { ChatResult, CompletionResult, UpstreamTarget } from '#gateway/providers/types';
import { closeUpstreamPools } from '#gateway/upstream/http';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import {
  API_KEY,
  collect,
  ctx,
  errorMappingCases,
  failure,
  makeTarget,
  PERSON_SCHEMA,
  simpleChat,
  streamedText,
  streamedToolCalls,
  WEATHER_TOOL,
} from './helpers.ts';

let sim: Simulator;
const adapter = getAdapter('anthropic');
const target = (o: Partial<UpstreamTarget> = {}) => makeTarget('anthropic', sim.url, 'claude-sonnet-4-5', o);
const last = () => sim.requests().at(-1)!;

beforeAll(async () => {
  sim = await startSimulator({ apiKey: API_KEY });
});
afterAll(async () => {
  await closeUpstreamPools();
  await sim.close();
});
beforeEach(() => {
  sim.clearFaults();
  sim.clearRequests();
});

describe('anthropic adapter', () => {
  it('declares what it supports', () => {
    expect(adapter.supportsNativeStructuredOutput).toBe(false);
    expect(adapter.supports('chat')).toBe(true);
    expect(adapter.supports('completion')).toBe(true);
    for (const k of ['embedding', 'image', 'transcription', 'speech'] as const)
      expect(adapter.supports(k)).toBe(false);
  });

  it('chat: /v1/messages, headers, system hoisted, max_tokens defaulted', async () => {
    const res = (await adapter.call(
      target(),
      {
        kind: 'chat',
        messages: [
          { role: 'system', content: 'Be kind.' },
          { role: 'user', content: 'Hello Claude' },
        ],
        temperature: 1.7,
      },
      ctx(),
    )) as ChatResult;
    expect(res.kind).toBe('chat');
    expect(res.content).toContain('Hello Claude');
    expect(res.finish_reason).toBe('stop');
    expect(res.id).toMatch(/^msg_/);
    expect(res.usage.prompt_tokens).toBeGreaterThan(0);
    expect(res.usage.completion_tokens).toBeGreaterThan(0);
    expect(res.usage.total_tokens).toBe(res.usage.prompt_tokens + res.usage.completion_tokens);
    const rec = last();
    expect(rec.path).toBe('/v1/messages');
    expect(rec.headers['x-api-key']).toBeDefined();
    expect(rec.headers['anthropic-version']).toBe('2023-06-01');
    expect(rec.body).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 4096,
      system: 'Be kind.',
      temperature: 1, // clamped to Anthropic's 0..1
      messages: [{ role: 'user', content: 'Hello Claude' }],
    });
  });

  it('max_tokens → finish_reason length', async () => {
    const res = (await adapter.call(
      target(),
      { ...simpleChat('a long question here'), max_tokens: 2 },
      ctx(),
    )) as ChatResult;
    expect(res.finish_reason).toBe('length');
    expect(last().body).toMatchObject({ max_tokens: 2 });
  });

  it('streaming: text deltas, finish, usage with input tokens from message_start', async () => {
    const events = await collect(adapter.stream(target(), simpleChat('Stream Claude'), ctx()));
    expect(streamedText(events)).toContain('Stream Claude');
    expect(events.filter((e) => e.type === 'finish')).toEqual([{ type: 'finish', finish_reason: 'stop' }]);
    const usage = events.find((e) => e.type === 'usage');
    expect(usage?.type === 'usage' && usage.usage.prompt_tokens).toBeGreaterThan(0);
    expect(usage?.type === 'usage' && usage.usage.completion_tokens).toBeGreaterThan(0);
    expect(last().body).toMatchObject({ stream: true });
  });

  it('vision: data URLs become base64 sources, http URLs url sources', async () => {
    await adapter.call(
      target(),
      {
        kind: 'chat',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Compare' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
              { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
            ],
          },
        ],
      },
      ctx(),
    );
    expect(last().body).toMatchObject({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
          ],
        },
      ],
    });
  });

  it('tools: tool_use → tool_calls, and tool results go back as tool_result blocks', async () => {
    const req = {
      kind: 'chat' as const,
      messages: [{ role: 'user' as const, content: 'Weather in Oslo?' }],
      tools: [WEATHER_TOOL],
      tool_choice: 'required' as const,
    };
    const res = (await adapter.call(target(), req, ctx())) as ChatResult;
    expect(res.finish_reason).toBe('tool_calls');
    const tc = res.tool_calls![0]!;
    expect(tc.id).toMatch(/^toolu_/);
    expect(tc.function.name).toBe('get_weather');
    expect(JSON.parse(tc.function.arguments)).toHaveProperty('city');
    expect(last().body).toMatchObject({
      tools: [
        {
          name: 'get_weather',
          description: 'Weather for a city',
          input_schema: WEATHER_TOOL.function.parameters,
        },
      ],
      tool_choice: { type: 'any' },
    });

    const res2 = (await adapter.call(
      target(),
      {
        ...req,
        tool_choice: 'auto',
        messages: [
          ...req.messages,
          { role: 'assistant', content: 'Checking.', tool_calls: res.tool_calls },
          { role: 'tool', tool_call_id: tc.id, content: '{"temp":3}' },
        ],
      },
      ctx(),
    )) as ChatResult;
    expect(res2.finish_reason).toBe('stop');
    expect(last().body).toMatchObject({
      tool_choice: { type: 'auto' },
      messages: [
        { role: 'user' },
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Checking.' },
            { type: 'tool_use', id: tc.id, name: 'get_weather', input: JSON.parse(tc.function.arguments) },
          ],
        },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: tc.id, content: '{"temp":3}' }] },
      ],
    });
  });

  it('tools, streaming: tool_use blocks and input_json_delta', async () => {
    const events = await collect(
      adapter.stream(
        target(),
        {
          kind: 'chat',
          messages: [{ role: 'user', content: 'W?' }],
          tools: [WEATHER_TOOL],
          tool_choice: { type: 'function', function: { name: 'get_weather' } },
        },
        ctx(),
      ),
    );
    const calls = streamedToolCalls(events);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.id).toMatch(/^toolu_/);
    expect(JSON.parse(calls[0]!.arguments)).toHaveProperty('unit');
    expect(events.find((e) => e.type === 'finish')).toEqual({ type: 'finish', finish_reason: 'tool_calls' });
    expect(last().body).toMatchObject({ tool_choice: { type: 'tool', name: 'get_weather' } });
  });

  it('structured output: schema instruction appended to the system prompt', async () => {
    await adapter.call(target(), { ...simpleChat(), structured: PERSON_SCHEMA }, ctx());
    const body = last().body as { system: string };
    expect(body.system.startsWith('You are terse.')).toBe(true);
    expect(body.system).toContain(JSON.stringify(PERSON_SCHEMA.schema));
  });

  it('completion kind: prompt as one user message', async () => {
    const res = (await adapter.call(
      target(),
      { kind: 'completion', prompt: 'Complete me', max_tokens: 100 },
      ctx(),
    )) as CompletionResult;
    expect(res.kind).toBe('completion');
    expect(res.text).toContain('Complete me');
    expect(last().body).toMatchObject({
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Complete me' }],
    });
    const events = await collect(adapter.stream(target(), { kind: 'completion', prompt: 'x' }, ctx()));
    expect(events.some((e) => e.type === 'finish')).toBe(true);
  });

  it('529 overloaded is retryable', async () => {
    sim.addFault({ match: { provider: 'anthropic' }, times: 1, status: 529 });
    const err = await failure(() => adapter.call(target(), simpleChat(), ctx()));
    expect(err.status).toBe(529);
    expect(err.retryable).toBe(true);
    expect(err.providerCode).toBe('overloaded_error');
  });

  describe('error mapping', () => {
    errorMappingCases({ sim: () => sim, adapter, provider: 'anthropic', target });
  });
});
