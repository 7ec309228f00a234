import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { getAdapter } from '#gateway/providers/registry';
import type {
  ChatResult,
  CompletionResult,
  EmbeddingResult,
  ImageResult,
  SpeechResult,
  TranscriptionResult,
  UpstreamTarget,
} from '#gateway/providers/types';
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
const adapter = getAdapter('openai');
const target = (o: Partial<UpstreamTarget> = {}) => makeTarget('openai', `${sim.url}/v1`, 'gpt-4o-mini', o);
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

describe('openai adapter', () => {
  it('declares what it supports', () => {
    expect(adapter.type).toBe('openai');
    expect(adapter.supportsNativeStructuredOutput).toBe(true);
    for (const k of ['chat', 'completion', 'embedding', 'image', 'transcription', 'speech'] as const) {
      expect(adapter.supports(k)).toBe(true);
    }
  });

  it('chat, non-streaming', async () => {
    const res = (await adapter.call(
      target(),
      { ...simpleChat('Hello there'), user: 'u1', stop: ['zzz'] },
      ctx(),
    )) as ChatResult;
    expect(res.kind).toBe('chat');
    expect(res.content).toContain('Hello there');
    expect(res.finish_reason).toBe('stop');
    expect(res.id).not.toBe('');
    expect(res.usage.prompt_tokens).toBeGreaterThan(0);
    expect(res.usage.total_tokens).toBe(res.usage.prompt_tokens + res.usage.completion_tokens);
    const rec = last();
    expect(rec.method).toBe('POST');
    expect(rec.path).toBe('/v1/chat/completions');
    expect(rec.headers.authorization).toBeDefined();
    expect(rec.headers['content-type']).toContain('application/json');
    expect(rec.body).toMatchObject({
      model: 'gpt-4o-mini',
      max_tokens: 200,
      user: 'u1',
      stop: ['zzz'],
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Hello there' },
      ],
    });
    expect(rec.body).not.toHaveProperty('stream');
  });

  it('reasoning models get max_completion_tokens', async () => {
    await adapter.call(target({ model: 'o3-mini' }), simpleChat(), ctx());
    expect(last().body).toMatchObject({ max_completion_tokens: 200 });
    expect(last().body).not.toHaveProperty('max_tokens');
  });

  it('chat, streaming with usage', async () => {
    const events = await collect(adapter.stream(target(), simpleChat('Stream me please'), ctx()));
    expect(streamedText(events)).toContain('Stream me please');
    const finish = events.find((e) => e.type === 'finish');
    expect(finish).toEqual({ type: 'finish', finish_reason: 'stop' });
    const usage = events.find((e) => e.type === 'usage');
    expect(usage?.type === 'usage' && usage.usage.completion_tokens).toBeGreaterThan(0);
    expect(events.filter((e) => e.type === 'delta').length).toBeGreaterThan(1);
    expect(last().body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
  });

  it('vision: image parts pass through', async () => {
    await adapter.call(
      target(),
      {
        kind: 'chat',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'low' } },
            ],
          },
        ],
      },
      ctx(),
    );
    expect(last().body).toMatchObject({
      messages: [{ content: [{ type: 'text' }, { type: 'image_url', image_url: { detail: 'low' } }] }],
    });
  });

  it('tools: call, then round-trip the result', async () => {
    const req = {
      kind: 'chat' as const,
      messages: [{ role: 'user' as const, content: 'Weather in Paris?' }],
      tools: [WEATHER_TOOL],
      tool_choice: 'auto' as const,
    };
    const res = (await adapter.call(target(), req, ctx())) as ChatResult;
    expect(res.finish_reason).toBe('tool_calls');
    expect(res.tool_calls).toHaveLength(1);
    const tc = res.tool_calls![0]!;
    expect(tc.function.name).toBe('get_weather');
    expect(JSON.parse(tc.function.arguments)).toHaveProperty('city');
    expect(last().body).toMatchObject({ tools: [WEATHER_TOOL], tool_choice: 'auto' });

    const res2 = (await adapter.call(
      target(),
      {
        ...req,
        messages: [
          ...req.messages,
          { role: 'assistant', content: null, tool_calls: res.tool_calls },
          { role: 'tool', tool_call_id: tc.id, content: '{"temp":21}' },
        ],
      },
      ctx(),
    )) as ChatResult;
    expect(res2.finish_reason).toBe('stop');
    expect(typeof res2.content).toBe('string');
  });

  it('tools, streaming', async () => {
    const events = await collect(
      adapter.stream(
        target(),
        {
          kind: 'chat',
          messages: [{ role: 'user', content: 'Weather?' }],
          tools: [WEATHER_TOOL],
          tool_choice: 'required',
        },
        ctx(),
      ),
    );
    const calls = streamedToolCalls(events);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.name).toBe('get_weather');
    expect(calls[0]!.id).not.toBe('');
    expect(JSON.parse(calls[0]!.arguments)).toHaveProperty('unit');
  });

  it('structured output via json_schema', async () => {
    const res = (await adapter.call(
      target(),
      { ...simpleChat('Who?'), structured: PERSON_SCHEMA },
      ctx(),
    )) as ChatResult;
    const parsed = JSON.parse(res.content!);
    expect(typeof parsed.name).toBe('string');
    expect(Number.isInteger(parsed.age)).toBe(true);
    expect(last().body).toMatchObject({
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'person', schema: PERSON_SCHEMA.schema, strict: true },
      },
    });
  });

  it('json mode', async () => {
    const res = (await adapter.call(
      target(),
      { ...simpleChat('Reply in JSON'), json: true },
      ctx(),
    )) as ChatResult;
    expect(() => JSON.parse(res.content!)).not.toThrow();
    expect(last().body).toMatchObject({ response_format: { type: 'json_object' } });
  });

  it('completion, call and stream', async () => {
    const res = (await adapter.call(
      target({ model: 'gpt-3.5-turbo-instruct' }),
      { kind: 'completion', prompt: 'Once upon a time', max_tokens: 50 },
      ctx(),
    )) as CompletionResult;
    expect(res.kind).toBe('completion');
    expect(res.text.length).toBeGreaterThan(0);
    expect(last().path).toBe('/v1/completions');
    expect(last().body).toMatchObject({ prompt: 'Once upon a time', max_tokens: 50 });
    const events = await collect(
      adapter.stream(
        target({ model: 'gpt-3.5-turbo-instruct' }),
        { kind: 'completion', prompt: 'Hi' },
        ctx(),
      ),
    );
    expect(streamedText(events).length).toBeGreaterThan(0);
    expect(events.some((e) => e.type === 'finish')).toBe(true);
  });

  it('embeddings (float and base64, dimensions)', async () => {
    const res = (await adapter.call(
      target({ model: 'text-embedding-3-small' }),
      { kind: 'embedding', input: ['a', 'b'], dimensions: 16 },
      ctx(),
    )) as EmbeddingResult;
    expect(res.embeddings).toHaveLength(2);
    expect((res.embeddings[0] as number[]).length).toBe(16);
    expect(res.usage.prompt_tokens).toBeGreaterThan(0);
    expect(last().path).toBe('/v1/embeddings');
    expect(last().body).toMatchObject({ model: 'text-embedding-3-small', input: ['a', 'b'], dimensions: 16 });
    const b64 = (await adapter.call(
      target({ model: 'text-embedding-3-small' }),
      { kind: 'embedding', input: 'a', encoding_format: 'base64' },
      ctx(),
    )) as EmbeddingResult;
    expect(typeof b64.embeddings[0]).toBe('string');
  });

  it('image generation', async () => {
    const res = (await adapter.call(
      target({ model: 'dall-e-3' }),
      { kind: 'image', prompt: 'a cat', size: '1024x1024', response_format: 'b64_json' },
      ctx(),
    )) as ImageResult;
    expect(res.kind).toBe('image');
    expect(res.images.length).toBeGreaterThan(0);
    expect(res.images[0]!.b64_json).toBeDefined();
    expect(last().path).toBe('/v1/images/generations');
  });

  it('transcription is a multipart upload', async () => {
    const file = new Uint8Array(32_000).fill(7);
    const res = (await adapter.call(
      target({ model: 'whisper-1' }),
      {
        kind: 'transcription',
        file,
        filename: 'clip.wav',
        mimeType: 'audio/wav',
        language: 'en',
        response_format: 'verbose_json',
      },
      ctx(),
    )) as TranscriptionResult;
    expect(res.text).toContain('clip.wav');
    expect(res.durationSeconds).toBeGreaterThan(0);
    const rec = last();
    expect(rec.path).toBe('/v1/audio/transcriptions');
    expect(rec.headers['content-type']).toContain('multipart/form-data');
    expect(rec.body).toMatchObject({
      fields: { model: 'whisper-1', language: 'en', response_format: 'verbose_json' },
      files: [{ field: 'file', filename: 'clip.wav', size: 32_000 }],
    });
    const text = (await adapter.call(
      target({ model: 'whisper-1' }),
      { kind: 'transcription', file, filename: 'clip.wav', mimeType: 'audio/wav', response_format: 'text' },
      ctx(),
    )) as TranscriptionResult;
    expect(text.text).toBe('Simulated transcription of clip.wav (32000 bytes)');
  });

  it('speech returns bytes', async () => {
    const res = (await adapter.call(
      target({ model: 'tts-1' }),
      { kind: 'speech', input: 'Hello', voice: 'alloy', response_format: 'wav' },
      ctx(),
    )) as SpeechResult;
    expect(res.kind).toBe('speech');
    expect(res.audio.byteLength).toBeGreaterThan(0);
    expect(res.format).toBe('wav');
    expect(res.contentType).toContain('audio/');
    expect(last().path).toBe('/v1/audio/speech');
  });

  describe('error mapping', () => {
    errorMappingCases({ sim: () => sim, adapter, provider: 'openai', target });
  });
});
