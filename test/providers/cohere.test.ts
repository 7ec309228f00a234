/** The Cohere adapter (API v2) against the simulator: chat, stream events, tools, embed. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { getAdapter } from '#gateway/providers/registry';
import type { ChatResult, CompletionResult, EmbeddingResult, UpstreamTarget } from '#gateway/providers/types';
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
const adapter = getAdapter('cohere');
const target = (o: Partial<UpstreamTarget> = {}) => makeTarget('cohere', sim.url, 'command-a-03-2025', o);
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

describe('cohere adapter', () => {
  it('declares what it supports', () => {
    expect(adapter.supportsNativeStructuredOutput).toBe(true);
    for (const k of ['chat', 'completion', 'embedding'] as const) expect(adapter.supports(k)).toBe(true);
    for (const k of ['image', 'transcription', 'speech'] as const) expect(adapter.supports(k)).toBe(false);
  });

  it('chat: /v2/chat with Bearer, p, stop_sequences, seed, penalties; billed units as usage', async () => {
    const res = (await adapter.call(
      target(),
      {
        ...simpleChat('Hello Cohere'),
        temperature: 0.3,
        top_p: 0.9,
        stop: ['END'],
        seed: 4,
        presence_penalty: 0.5,
      },
      ctx(),
    )) as ChatResult;
    expect(res.content).toBe('Simulated cohere/command-a-03-2025 reply: Hello Cohere');
    expect(res.finish_reason).toBe('stop');
    // billed_units, not the larger `tokens` that includes Cohere's own prompt template.
    expect(res.usage.prompt_tokens).toBe(
      Math.ceil(('You are terse.'.length + 1 + 'Hello Cohere'.length) / 4),
    );
    expect(last().path).toBe('/v2/chat');
    expect(last().headers.authorization).toBe('<redacted>');
    expect(last().body).toEqual({
      model: 'command-a-03-2025',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Hello Cohere' },
      ],
      max_tokens: 200,
      temperature: 0.3,
      p: 0.9,
      stop_sequences: ['END'],
      seed: 4,
      presence_penalty: 0.5,
    });
  });

  it('a penalty outside 0..1 and logit_bias are refused before anything is sent', async () => {
    for (const extra of [{ frequency_penalty: -0.5 }, { logit_bias: { '1': 2 } }]) {
      const err = await failure(() => adapter.call(target(), { ...simpleChat(), ...extra }, ctx()));
      expect(err.code).toBe('UPSTREAM_UNSUPPORTED');
    }
    expect(sim.requests()).toEqual([]);
  });

  it('streaming: content-delta events, message-end with finish and usage', async () => {
    const events = await collect(adapter.stream(target(), simpleChat('Stream Cohere'), ctx()));
    expect(streamedText(events)).toBe('Simulated cohere/command-a-03-2025 reply: Stream Cohere');
    expect(events.filter((e) => e.type === 'finish')).toEqual([{ type: 'finish', finish_reason: 'stop' }]);
    const usage = events.at(-1);
    expect(usage?.type === 'usage' && usage.usage.completion_tokens).toBeGreaterThan(0);
    expect(last().body).toMatchObject({ stream: true });
  });

  it('tools: tool_calls, tool messages round trip; a named tool is the only one offered, REQUIRED', async () => {
    const req = {
      kind: 'chat' as const,
      messages: [{ role: 'user' as const, content: 'Weather in Oslo?' }],
      tools: [WEATHER_TOOL],
    };
    const res = (await adapter.call(target(), req, ctx())) as ChatResult;
    expect(res.finish_reason).toBe('tool_calls');
    const tc = res.tool_calls![0]!;
    expect(JSON.parse(tc.function.arguments)).toHaveProperty('city');
    const res2 = (await adapter.call(
      target(),
      {
        ...req,
        messages: [
          ...req.messages,
          { role: 'assistant', content: null, tool_calls: res.tool_calls },
          { role: 'tool', tool_call_id: tc.id, content: '{"temp":3}' },
        ],
      },
      ctx(),
    )) as ChatResult;
    expect(res2.finish_reason).toBe('stop');
    expect((last().body as { messages: unknown[] }).messages.slice(1)).toEqual([
      { role: 'assistant', tool_calls: [{ id: tc.id, type: 'function', function: tc.function }] },
      { role: 'tool', tool_call_id: tc.id, content: '{"temp":3}' },
    ]);
    const other = { type: 'function' as const, function: { name: 'other', parameters: { type: 'object' } } };
    await adapter.call(
      target(),
      {
        ...req,
        tools: [other, WEATHER_TOOL],
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
      },
      ctx(),
    );
    expect(last().body).toMatchObject({ tool_choice: 'REQUIRED' });
    expect(
      (last().body as { tools: { function: { name: string } }[] }).tools.map((t) => t.function.name),
    ).toEqual(['get_weather']);
  });

  it('tools, streaming: tool-call-start and -delta events', async () => {
    const events = await collect(
      adapter.stream(
        target(),
        { kind: 'chat', messages: [{ role: 'user', content: 'W?' }], tools: [WEATHER_TOOL] },
        ctx(),
      ),
    );
    const calls = streamedToolCalls(events);
    expect(calls).toHaveLength(1);
    expect(JSON.parse(calls[0]!.arguments)).toHaveProperty('city');
    expect(events.find((e) => e.type === 'finish')).toEqual({ type: 'finish', finish_reason: 'tool_calls' });
  });

  it('structured output: response_format json_object with json_schema', async () => {
    const res = (await adapter.call(
      target(),
      { ...simpleChat('Who?'), structured: PERSON_SCHEMA },
      ctx(),
    )) as ChatResult;
    expect(typeof JSON.parse(res.content!).name).toBe('string');
    expect(last().body).toMatchObject({
      response_format: { type: 'json_object', json_schema: PERSON_SCHEMA.schema },
    });
  });

  it('completion kind', async () => {
    const res = (await adapter.call(
      target(),
      { kind: 'completion', prompt: 'Finish this' },
      ctx(),
    )) as CompletionResult;
    expect(res.text).toContain('Finish this');
  });

  it('embeddings: /v2/embed, search_document, float; billed input tokens', async () => {
    const res = (await adapter.call(
      target({ model: 'embed-v4.0' }),
      { kind: 'embedding', input: ['a b c d', 'e'], dimensions: 256 },
      ctx(),
    )) as EmbeddingResult;
    expect(res.embeddings.map((e) => (e as number[]).length)).toEqual([256, 256]);
    expect(res.usage.prompt_tokens).toBe(2 + 1);
    expect(last().body).toEqual({
      model: 'embed-v4.0',
      texts: ['a b c d', 'e'],
      input_type: 'search_document',
      embedding_types: ['float'],
      output_dimension: 256,
    });
  });

  describe('error mapping', () => {
    errorMappingCases({ sim: () => sim, adapter, provider: 'cohere', target });
  });
});
