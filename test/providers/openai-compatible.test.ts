import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { compatDialect, detectCompatServer } from '#gateway/providers/openai-compatible/request';
import { getAdapter } from '#gateway/providers/registry';
import type { ChatResult, EmbeddingResult, UpstreamTarget } from '#gateway/providers/types';
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
const adapter = getAdapter('openai-compatible');
const target = (o: Partial<UpstreamTarget> = {}) =>
  makeTarget('openai-compatible', `${sim.url}/v1`, 'llama-3.1-8b', o);
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

describe('openai-compatible dialects', () => {
  it('detects servers by base URL', () => {
    expect(detectCompatServer('https://api.groq.com/openai/v1')).toBe('groq');
    expect(detectCompatServer('https://api.mistral.ai/v1')).toBe('mistral');
    expect(detectCompatServer('https://api.together.xyz/v1')).toBe('together');
    expect(detectCompatServer('https://api.deepseek.com/v1')).toBe('deepseek');
    expect(detectCompatServer('https://api.x.ai/v1')).toBe('xai');
    expect(detectCompatServer('http://localhost:11434/v1')).toBe('ollama');
    expect(detectCompatServer('http://vllm.internal:8000/v1')).toBe('generic');
  });

  it('per-target options override the detected dialect', () => {
    const t = makeTarget('openai-compatible', 'http://vllm:8000/v1', 'm');
    expect(compatDialect(t)).toMatchObject({ streamUsage: false, jsonSchema: false, modelInBody: true });
    expect(compatDialect({ ...t, options: { streamUsage: true, jsonSchema: true } })).toMatchObject({
      streamUsage: true,
      jsonSchema: true,
    });
  });

  it('refuses kinds a known server does not serve', async () => {
    const t = makeTarget('openai-compatible', 'https://api.deepseek.com/v1', 'deepseek-chat');
    const err = await failure(() => adapter.call(t, { kind: 'embedding', input: 'x' }, ctx()));
    expect(err.code).toBe('UPSTREAM_UNSUPPORTED');
    expect(err.retryable).toBe(false);
  });
});

describe('openai-compatible adapter (generic server, via the simulator)', () => {
  it('declares what it supports', () => {
    expect(adapter.supportsNativeStructuredOutput).toBe(false);
    expect(adapter.supports('chat')).toBe(true);
    expect(adapter.supports('embedding')).toBe(true);
  });

  it('chat: bearer auth, developer role sent as system', async () => {
    const res = (await adapter.call(
      target(),
      {
        kind: 'chat',
        messages: [
          { role: 'developer', content: 'Be brief.' },
          { role: 'user', content: 'Hello compat' },
        ],
      },
      ctx(),
    )) as ChatResult;
    expect(res.content).toContain('Hello compat');
    const rec = last();
    expect(rec.path).toBe('/v1/chat/completions');
    expect(rec.headers.authorization).toBeDefined();
    expect(rec.body).toMatchObject({
      model: 'llama-3.1-8b',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello compat' },
      ],
    });
  });

  it('streaming without stream_options (usage may be absent)', async () => {
    const events = await collect(adapter.stream(target(), simpleChat('compat stream'), ctx()));
    expect(streamedText(events)).toContain('compat stream');
    expect(events.some((e) => e.type === 'finish')).toBe(true);
    expect(last().body).toMatchObject({ stream: true });
    expect(last().body).not.toHaveProperty('stream_options');
  });

  it('stream_options when the target opts in', async () => {
    const events = await collect(
      adapter.stream(target({ options: { streamUsage: true } }), simpleChat(), ctx()),
    );
    expect(events.some((e) => e.type === 'usage')).toBe(true);
    expect(last().body).toMatchObject({ stream_options: { include_usage: true } });
  });

  it('structured output falls back to json_object + schema instruction', async () => {
    const res = (await adapter.call(
      target(),
      { ...simpleChat('Who?'), structured: PERSON_SCHEMA },
      ctx(),
    )) as ChatResult;
    expect(() => JSON.parse(res.content!)).not.toThrow();
    const body = last().body as { response_format: unknown; messages: { role: string; content: string }[] };
    expect(body.response_format).toEqual({ type: 'json_object' });
    expect(body.messages[0]!.role).toBe('system');
    expect(body.messages[0]!.content).toContain('You are terse.');
    expect(body.messages[0]!.content).toContain('"age"');
    expect(body.messages).toHaveLength(2);
  });

  it('structured output uses json_schema when the target says it can', async () => {
    await adapter.call(
      target({ options: { jsonSchema: true } }),
      { ...simpleChat(), structured: PERSON_SCHEMA },
      ctx(),
    );
    expect(last().body).toMatchObject({ response_format: { type: 'json_schema' } });
  });

  it('tools', async () => {
    const events = await collect(
      adapter.stream(
        target(),
        { kind: 'chat', messages: [{ role: 'user', content: 'W?' }], tools: [WEATHER_TOOL] },
        ctx(),
      ),
    );
    expect(streamedToolCalls(events)[0]?.name).toBe('get_weather');
  });

  it('embeddings', async () => {
    const res = (await adapter.call(
      target({ model: 'nomic-embed' }),
      { kind: 'embedding', input: 'x' },
      ctx(),
    )) as EmbeddingResult;
    expect(res.embeddings).toHaveLength(1);
  });

  describe('error mapping', () => {
    errorMappingCases({ sim: () => sim, adapter, provider: 'openai', target });
  });
});
