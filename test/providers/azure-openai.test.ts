import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { getAdapter } from '#gateway/providers/registry';
import type { ChatResult, EmbeddingResult, UpstreamTarget } from '#gateway/providers/types';
import { closeUpstreamPools } from '#gateway/upstream/http';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import {
  API_KEY,
  collect,
  ctx,
  errorMappingCases,
  makeTarget,
  PERSON_SCHEMA,
  simpleChat,
  streamedText,
  streamedToolCalls,
  WEATHER_TOOL,
} from './helpers.ts';

let sim: Simulator;
const adapter = getAdapter('azure-openai');
const target = (o: Partial<UpstreamTarget> = {}) => makeTarget('azure-openai', sim.url, 'my-gpt4o', o);
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

describe('azure-openai adapter', () => {
  it('declares what it supports', () => {
    expect(adapter.supportsNativeStructuredOutput).toBe(true);
    for (const k of ['chat', 'completion', 'embedding', 'image', 'transcription', 'speech'] as const) {
      expect(adapter.supports(k)).toBe(true);
    }
  });

  it('chat: deployment URL, default api-version, api-key header, no model in body', async () => {
    const res = (await adapter.call(target(), simpleChat('Hi Azure'), ctx())) as ChatResult;
    expect(res.content).toContain('Hi Azure');
    expect(res.usage.total_tokens).toBeGreaterThan(0);
    const rec = last();
    expect(rec.provider).toBe('azure-openai');
    expect(rec.path).toBe('/openai/deployments/my-gpt4o/chat/completions?api-version=2024-10-21');
    expect(rec.headers['api-key']).toBeDefined();
    expect(rec.headers.authorization).toBeUndefined();
    expect(rec.body).not.toHaveProperty('model');
    expect(rec.body).toMatchObject({ max_tokens: 200, messages: [{ role: 'system' }, { role: 'user' }] });
  });

  it('api-version override', async () => {
    await adapter.call(target({ options: { apiVersion: '2025-01-01-preview' } }), simpleChat(), ctx());
    expect(last().path).toBe('/openai/deployments/my-gpt4o/chat/completions?api-version=2025-01-01-preview');
  });

  it('streaming (content-filter chunks are skipped) with usage', async () => {
    const events = await collect(adapter.stream(target(), simpleChat('Stream azure'), ctx()));
    expect(streamedText(events)).toContain('Stream azure');
    expect(events.some((e) => e.type === 'finish')).toBe(true);
    expect(events.some((e) => e.type === 'usage')).toBe(true);
    expect(last().body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('tools', async () => {
    const res = (await adapter.call(
      target(),
      { kind: 'chat', messages: [{ role: 'user', content: 'Weather?' }], tools: [WEATHER_TOOL] },
      ctx(),
    )) as ChatResult;
    expect(res.finish_reason).toBe('tool_calls');
    expect(res.tool_calls?.[0]?.function.name).toBe('get_weather');
    const events = await collect(
      adapter.stream(
        target(),
        { kind: 'chat', messages: [{ role: 'user', content: 'W?' }], tools: [WEATHER_TOOL] },
        ctx(),
      ),
    );
    expect(streamedToolCalls(events)[0]?.name).toBe('get_weather');
  });

  it('structured output via json_schema', async () => {
    const res = (await adapter.call(
      target(),
      { ...simpleChat(), structured: PERSON_SCHEMA },
      ctx(),
    )) as ChatResult;
    expect(JSON.parse(res.content!)).toHaveProperty('age');
    expect(last().body).toMatchObject({
      response_format: { type: 'json_schema', json_schema: { name: 'person' } },
    });
  });

  it('embeddings', async () => {
    const res = (await adapter.call(
      target({ model: 'my-embedder' }),
      { kind: 'embedding', input: ['x', 'y', 'z'] },
      ctx(),
    )) as EmbeddingResult;
    expect(res.embeddings).toHaveLength(3);
    expect(last().path).toBe('/openai/deployments/my-embedder/embeddings?api-version=2024-10-21');
  });

  it('transcription and speech use the deployment URL', async () => {
    await adapter.call(
      target({ model: 'whisper' }),
      { kind: 'transcription', file: new Uint8Array(100), filename: 'a.mp3', mimeType: 'audio/mpeg' },
      ctx(),
    );
    expect(last().path).toBe('/openai/deployments/whisper/audio/transcriptions?api-version=2024-10-21');
    expect(last().body).toMatchObject({ files: [{ field: 'file', filename: 'a.mp3' }] });
  });

  describe('error mapping', () => {
    errorMappingCases({ sim: () => sim, adapter, provider: 'azure-openai', target });
  });
});
