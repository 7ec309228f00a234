import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { getAdapter } from '#gateway/providers/registry';
import type {
  ChatResult,
  CompletionResult,
  EmbeddingResult,
  ImageResult,
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
  failure,
  makeTarget,
  PERSON_SCHEMA,
  simpleChat,
  streamedText,
  streamedToolCalls,
  WEATHER_TOOL,
} from './helpers.ts';

let sim: Simulator;
const adapter = getAdapter('gemini');
const target = (o: Partial<UpstreamTarget> = {}) => makeTarget('gemini', sim.url, 'gemini-2.0-flash', o);
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

describe('gemini adapter', () => {
  it('declares what it supports', () => {
    expect(adapter.supportsNativeStructuredOutput).toBe(true);
    for (const k of ['chat', 'completion', 'embedding', 'image', 'transcription'] as const)
      expect(adapter.supports(k)).toBe(true);
    expect(adapter.supports('speech')).toBe(false);
  });

  it('images: Imagen models through :predict, sizes as aspect ratios, data: URLs unless b64_json', async () => {
    const res = (await adapter.call(
      target({ model: 'imagen-4.0-generate-001' }),
      { kind: 'image', prompt: 'a paper boat', n: 3, size: '1024x1024' },
      ctx(),
    )) as ImageResult;
    expect(res.images).toHaveLength(3);
    expect(res.images[0]!.url).toMatch(/^data:image\/png;base64,/);
    expect(last().path).toBe('/v1beta/models/imagen-4.0-generate-001:predict');
    expect(last().body).toEqual({
      instances: [{ prompt: 'a paper boat' }],
      parameters: { sampleCount: 3, aspectRatio: '1:1' },
    });
    const b64 = (await adapter.call(
      target({ model: 'imagen-4.0-generate-001' }),
      { kind: 'image', prompt: 'x', response_format: 'b64_json', size: '1024x1792' },
      ctx(),
    )) as ImageResult;
    expect(b64.images[0]!.b64_json).toBeTruthy();
    expect(last().body).toMatchObject({ parameters: { aspectRatio: '9:16' } });
  });

  it('images: Gemini image models through generateContent with image output, one per request', async () => {
    const res = (await adapter.call(
      target({ model: 'gemini-2.5-flash-image' }),
      { kind: 'image', prompt: 'a kite', size: '1536x1024' },
      ctx(),
    )) as ImageResult;
    expect(res.images).toHaveLength(1);
    expect(res.usage?.completion_tokens).toBeGreaterThan(0);
    expect(last().body).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'a kite' }] }],
      generationConfig: { responseModalities: ['IMAGE'], imageConfig: { aspectRatio: '3:2' } },
    });
    sim.clearRequests();
    for (const req of [{ n: 2 }, { style: 'vivid' }, { size: '1000x200' }]) {
      const err = await failure(() =>
        adapter.call(
          target({ model: 'gemini-2.5-flash-image' }),
          { kind: 'image', prompt: 'x', ...req },
          ctx(),
        ),
      );
      expect(err.code).toBe('UPSTREAM_UNSUPPORTED');
    }
    expect(sim.requests()).toEqual([]);
  });

  it('transcription: the audio inline with a transcription instruction; usage reported', async () => {
    const res = (await adapter.call(
      target(),
      {
        kind: 'transcription',
        file: new Uint8Array(1234),
        filename: 'memo.wav',
        mimeType: 'audio/wav',
        language: 'fr',
        prompt: 'Names: Zoë, Luc',
      },
      ctx(),
    )) as TranscriptionResult;
    expect(res.text).toBe('Simulated transcript of 1234 bytes of audio/wav.');
    expect(res.usage?.prompt_tokens).toBeGreaterThan(0);
    const body = last().body as {
      contents: { parts: { text?: string; inlineData?: { mimeType: string } }[] }[];
    };
    expect(last().path).toBe('/v1beta/models/gemini-2.0-flash:generateContent');
    expect(body.contents[0]!.parts[0]!.text).toContain('"fr"');
    expect(body.contents[0]!.parts[0]!.text).toContain('Zoë, Luc');
    expect(body.contents[0]!.parts[1]!.inlineData?.mimeType).toBe('audio/wav');
    const err = await failure(() =>
      adapter.call(
        target(),
        {
          kind: 'transcription',
          file: new Uint8Array(4),
          filename: 'a.wav',
          mimeType: 'audio/wav',
          response_format: 'verbose_json',
        },
        ctx(),
      ),
    );
    expect(err.code).toBe('UPSTREAM_UNSUPPORTED');
    expect(err.message).toContain('"response_format"');
  });

  it('chat: generateContent, systemInstruction, generationConfig, x-goog-api-key', async () => {
    const res = (await adapter.call(
      target(),
      { ...simpleChat('Hello Gemini'), temperature: 0.3, top_p: 0.9, stop: ['END'] },
      ctx(),
    )) as ChatResult;
    expect(res.content).toContain('Hello Gemini');
    expect(res.finish_reason).toBe('stop');
    expect(res.usage.prompt_tokens).toBeGreaterThan(0);
    expect(res.usage.completion_tokens).toBeGreaterThan(0);
    expect(res.usage.total_tokens).toBe(res.usage.prompt_tokens + res.usage.completion_tokens);
    const rec = last();
    expect(rec.path).toBe('/v1beta/models/gemini-2.0-flash:generateContent');
    expect(rec.headers['x-goog-api-key']).toBeDefined();
    expect(rec.body).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Hello Gemini' }] }],
      systemInstruction: { parts: [{ text: 'You are terse.' }] },
      generationConfig: { temperature: 0.3, topP: 0.9, maxOutputTokens: 200, stopSequences: ['END'] },
    });
  });

  it('MAX_TOKENS → length', async () => {
    const res = (await adapter.call(
      target(),
      { ...simpleChat('a fairly long prompt'), max_tokens: 2 },
      ctx(),
    )) as ChatResult;
    expect(res.finish_reason).toBe('length');
  });

  it('streaming: streamGenerateContent?alt=sse', async () => {
    const events = await collect(adapter.stream(target(), simpleChat('Stream Gemini'), ctx()));
    expect(streamedText(events)).toContain('Stream Gemini');
    expect(events.filter((e) => e.type === 'finish')).toEqual([{ type: 'finish', finish_reason: 'stop' }]);
    const usage = events.at(-1);
    expect(usage?.type).toBe('usage');
    expect(last().path).toBe('/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse');
  });

  it('vision: data URLs become inlineData', async () => {
    await adapter.call(
      target(),
      {
        kind: 'chat',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What?' },
              { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
            ],
          },
        ],
      },
      ctx(),
    );
    expect(last().body).toMatchObject({
      contents: [
        {
          role: 'user',
          parts: [{ text: 'What?' }, { inlineData: { mimeType: 'image/jpeg', data: '/9j/4AAQ' } }],
        },
      ],
    });
  });

  it('tools: functionDeclarations, functionCall → tool_calls with stable ids, functionResponse round trip', async () => {
    const req = {
      kind: 'chat' as const,
      messages: [{ role: 'user' as const, content: 'Weather in Rome?' }],
      tools: [WEATHER_TOOL],
    };
    const res = (await adapter.call(target(), req, ctx())) as ChatResult;
    expect(res.finish_reason).toBe('tool_calls');
    const tc = res.tool_calls![0]!;
    expect(tc.function.name).toBe('get_weather');
    expect(tc.id.length).toBeGreaterThan(0);
    expect(JSON.parse(tc.function.arguments)).toHaveProperty('city');
    expect(last().body).toMatchObject({
      tools: [
        {
          functionDeclarations: [
            {
              name: 'get_weather',
              description: 'Weather for a city',
              parametersJsonSchema: WEATHER_TOOL.function.parameters,
            },
          ],
        },
      ],
    });

    const res2 = (await adapter.call(
      target(),
      {
        ...req,
        messages: [
          ...req.messages,
          { role: 'assistant', content: null, tool_calls: res.tool_calls },
          { role: 'tool', tool_call_id: tc.id, content: '{"temp":30}' },
        ],
      },
      ctx(),
    )) as ChatResult;
    expect(res2.finish_reason).toBe('stop');
    expect(last().body).toMatchObject({
      contents: [
        { role: 'user' },
        {
          role: 'model',
          parts: [{ functionCall: { name: 'get_weather', args: JSON.parse(tc.function.arguments) } }],
        },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temp: 30 } } }] },
      ],
    });
  });

  it('tool_choice maps to functionCallingConfig', async () => {
    await adapter.call(
      target(),
      {
        ...simpleChat(),
        tools: [WEATHER_TOOL],
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
      },
      ctx(),
    );
    expect(last().body).toMatchObject({
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } },
    });
    const none = (await adapter.call(
      target(),
      { ...simpleChat(), tools: [WEATHER_TOOL], tool_choice: 'none' },
      ctx(),
    )) as ChatResult;
    expect(none.tool_calls).toBeUndefined();
    expect(last().body).toMatchObject({ toolConfig: { functionCallingConfig: { mode: 'NONE' } } });
  });

  it('tools, streaming', async () => {
    const events = await collect(
      adapter.stream(
        target(),
        { kind: 'chat', messages: [{ role: 'user', content: 'W?' }], tools: [WEATHER_TOOL] },
        ctx(),
      ),
    );
    const calls = streamedToolCalls(events);
    expect(calls).toHaveLength(1);
    expect(calls[0]!.name).toBe('get_weather');
    expect(events.find((e) => e.type === 'finish')).toEqual({ type: 'finish', finish_reason: 'tool_calls' });
  });

  it('structured output: responseMimeType + responseJsonSchema', async () => {
    const res = (await adapter.call(
      target(),
      { ...simpleChat('Who?'), structured: PERSON_SCHEMA },
      ctx(),
    )) as ChatResult;
    const parsed = JSON.parse(res.content!);
    expect(typeof parsed.name).toBe('string');
    expect(last().body).toMatchObject({
      generationConfig: { responseMimeType: 'application/json', responseJsonSchema: PERSON_SCHEMA.schema },
    });
  });

  it('completion kind', async () => {
    const res = (await adapter.call(
      target(),
      { kind: 'completion', prompt: 'Finish this' },
      ctx(),
    )) as CompletionResult;
    expect(res.kind).toBe('completion');
    expect(res.text).toContain('Finish this');
  });

  it('embeddings: embedContent for one input, batchEmbedContents for many', async () => {
    const one = (await adapter.call(
      target({ model: 'text-embedding-004' }),
      { kind: 'embedding', input: 'hello', dimensions: 12 },
      ctx(),
    )) as EmbeddingResult;
    expect(one.embeddings).toHaveLength(1);
    expect((one.embeddings[0] as number[]).length).toBe(12);
    expect(last().path).toBe('/v1beta/models/text-embedding-004:embedContent');
    expect(last().body).toEqual({ content: { parts: [{ text: 'hello' }] }, outputDimensionality: 12 });

    const many = (await adapter.call(
      target({ model: 'text-embedding-004' }),
      { kind: 'embedding', input: ['a', 'b', 'c'], encoding_format: 'base64' },
      ctx(),
    )) as EmbeddingResult;
    expect(many.embeddings).toHaveLength(3);
    expect(typeof many.embeddings[0]).toBe('string');
    expect(last().path).toBe('/v1beta/models/text-embedding-004:batchEmbedContents');
    expect(last().body).toMatchObject({
      requests: [{ model: 'models/text-embedding-004', content: { parts: [{ text: 'a' }] } }, {}, {}],
    });
  });

  describe('error mapping', () => {
    errorMappingCases({ sim: () => sim, adapter, provider: 'gemini', target });
  });
});
