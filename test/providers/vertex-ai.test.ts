/**
 * The Vertex AI adapter against the simulator, with real tokens: the service-account key's JWT
 * assertion is exchanged at the simulator's token endpoint, whose access token Vertex then checks.
 */
import { generateKeyPairSync } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { serviceAccountAuth } from '#gateway/providers/auth/gcp';
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

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const CLIENT_EMAIL = 'gateway@sim-project.iam.gserviceaccount.com';
const TIMEOUTS = { connectMs: 1000, firstByteMs: 5000, totalMs: 10_000 };

let sim: Simulator;
let auth: ReturnType<typeof serviceAccountAuth>;
const adapter = getAdapter('vertex-ai');
const target = (o: Partial<UpstreamTarget> = {}) =>
  makeTarget('vertex-ai', sim.url, 'gemini-2.5-flash', {
    apiKey: '',
    auth,
    options: { region: 'europe-west4', project: 'sim-project' },
    ...o,
  });
const claude = (o: Partial<UpstreamTarget> = {}) => target({ model: 'claude-sonnet-4-5@20250929', ...o });
const last = () =>
  sim
    .requests()
    .filter((r) => r.provider === 'vertex-ai')
    .at(-1)!;
const BASE = '/v1/projects/sim-project/locations/europe-west4/publishers';

beforeAll(async () => {
  sim = await startSimulator({
    google: {
      clientEmail: CLIENT_EMAIL,
      publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    },
  });
  const key = JSON.stringify({
    type: 'service_account',
    client_email: CLIENT_EMAIL,
    private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    private_key_id: 'k1',
    token_uri: `${sim.url}/token`,
  });
  auth = serviceAccountAuth({ method: 'gcp-service-account' }, key, TIMEOUTS);
});
afterAll(async () => {
  await closeUpstreamPools();
  await sim.close();
});
beforeEach(() => {
  sim.clearFaults();
  sim.clearRequests();
});

describe('vertex-ai adapter: Gemini models', () => {
  it('chat: generateContent at the project/location URL with the exchanged access token', async () => {
    const res = (await adapter.call(
      target(),
      { ...simpleChat('Hello Vertex'), temperature: 0.2 },
      ctx(),
    )) as ChatResult;
    expect(res.content).toContain('Simulated vertex-ai/gemini-2.5-flash reply: Hello Vertex');
    expect(res.usage.prompt_tokens).toBeGreaterThan(0);
    const rec = last();
    expect(rec.path).toBe(`${BASE}/google/models/gemini-2.5-flash:generateContent`);
    expect(rec.body).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'Hello Vertex' }] }],
      systemInstruction: { parts: [{ text: 'You are terse.' }] },
      generationConfig: { temperature: 0.2, maxOutputTokens: 200 },
    });
    // The token came from the token endpoint, once, and is reused.
    await adapter.call(target(), simpleChat(), ctx());
    expect(sim.requests().filter((r) => r.provider === 'google-auth')).toHaveLength(1);
  });

  it('streaming: streamGenerateContent?alt=sse', async () => {
    const events = await collect(adapter.stream(target(), simpleChat('Stream Vertex'), ctx()));
    expect(streamedText(events)).toContain('Stream Vertex');
    expect(events.filter((e) => e.type === 'finish')).toEqual([{ type: 'finish', finish_reason: 'stop' }]);
    expect(events.at(-1)?.type).toBe('usage');
    expect(last().path).toBe(`${BASE}/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse`);
  });

  it('tools and structured output take the Gemini forms', async () => {
    const res = (await adapter.call(
      target(),
      {
        kind: 'chat',
        messages: [{ role: 'user', content: 'Weather?' }],
        tools: [WEATHER_TOOL],
        tool_choice: 'required',
      },
      ctx(),
    )) as ChatResult;
    expect(res.tool_calls?.[0]?.function.name).toBe('get_weather');
    expect(last().body).toMatchObject({ toolConfig: { functionCallingConfig: { mode: 'ANY' } } });
    const json = (await adapter.call(
      target(),
      { ...simpleChat('Who?'), structured: PERSON_SCHEMA },
      ctx(),
    )) as ChatResult;
    expect(typeof JSON.parse(json.content!).age).toBe('number');
    expect(last().body).toMatchObject({ generationConfig: { responseJsonSchema: PERSON_SCHEMA.schema } });
  });

  it('embeddings: predict with instances, token counts from the statistics', async () => {
    const res = (await adapter.call(
      target({ model: 'text-embedding-005' }),
      { kind: 'embedding', input: ['one', 'two three'], dimensions: 16 },
      ctx(),
    )) as EmbeddingResult;
    expect(res.embeddings.map((e) => (e as number[]).length)).toEqual([16, 16]);
    expect(res.usage.prompt_tokens).toBe(1 + 3);
    expect(last().path).toBe(`${BASE}/google/models/text-embedding-005:predict`);
    expect(last().body).toEqual({
      instances: [{ content: 'one' }, { content: 'two three' }],
      parameters: { outputDimensionality: 16 },
    });
  });

  it('images: Imagen predict', async () => {
    const res = (await adapter.call(
      target({ model: 'imagen-4.0-generate-001' }),
      { kind: 'image', prompt: 'a lighthouse', n: 2, size: '1792x1024' },
      ctx(),
    )) as ImageResult;
    expect(res.images).toHaveLength(2);
    expect(last().body).toEqual({
      instances: [{ prompt: 'a lighthouse' }],
      parameters: { sampleCount: 2, aspectRatio: '16:9' },
    });
  });

  it('transcription: the audio inline in generateContent', async () => {
    const res = (await adapter.call(
      target(),
      {
        kind: 'transcription',
        file: new Uint8Array(300),
        filename: 'a.mp3',
        mimeType: 'audio/mpeg',
        language: 'de',
      },
      ctx(),
    )) as TranscriptionResult;
    expect(res.text).toBe('Simulated transcript of 300 bytes of audio/mpeg.');
    expect(res.language).toBe('de');
  });
});

describe('vertex-ai adapter: Claude models', () => {
  it('chat: rawPredict with the Messages body, the model in the URL, anthropic_version vertex-2023-10-16', async () => {
    const res = (await adapter.call(
      claude(),
      { ...simpleChat('Hello Claude'), stop: ['END'] },
      ctx(),
    )) as ChatResult;
    expect(res.content).toContain('Hello Claude');
    expect(res.usage.completion_tokens).toBeGreaterThan(0);
    expect(last().path).toBe(`${BASE}/anthropic/models/claude-sonnet-4-5%4020250929:rawPredict`);
    expect(last().body).toEqual({
      anthropic_version: 'vertex-2023-10-16',
      max_tokens: 200,
      messages: [{ role: 'user', content: 'Hello Claude' }],
      system: 'You are terse.',
      stop_sequences: ['END'],
    });
  });

  it('streaming: streamRawPredict with stream: true, Anthropic events', async () => {
    const events = await collect(adapter.stream(claude(), simpleChat('Stream Claude'), ctx()));
    expect(streamedText(events)).toContain('Stream Claude');
    expect(last().path).toBe(`${BASE}/anthropic/models/claude-sonnet-4-5%4020250929:streamRawPredict`);
    expect(last().body).toMatchObject({ stream: true, anthropic_version: 'vertex-2023-10-16' });
    const tools = await collect(
      adapter.stream(
        claude(),
        { kind: 'chat', messages: [{ role: 'user', content: 'W?' }], tools: [WEATHER_TOOL] },
        ctx(),
      ),
    );
    expect(streamedToolCalls(tools)[0]?.name).toBe('get_weather');
  });

  it('completion kind; embeddings are refused for Claude before anything is sent', async () => {
    const res = (await adapter.call(
      claude(),
      { kind: 'completion', prompt: 'Finish' },
      ctx(),
    )) as CompletionResult;
    expect(res.text).toContain('Finish');
    sim.clearRequests();
    const err = await failure(() => adapter.call(claude(), { kind: 'embedding', input: 'x' }, ctx()));
    expect(err.code).toBe('UPSTREAM_UNSUPPORTED');
    expect(sim.requests()).toEqual([]);
  });
});

describe('vertex-ai adapter: error mapping', () => {
  errorMappingCases({
    sim: () => sim,
    adapter,
    provider: 'vertex-ai',
    target: (o) => target(o),
    badCredentials: {
      target: { auth: { kind: 'bearer', token: async () => 'ya29.not-issued' } },
      status: 401,
    },
  });
});
