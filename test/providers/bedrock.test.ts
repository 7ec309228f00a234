/**
 * The Bedrock adapter against the simulator, which checks every request's SigV4 signature against
 * the key pair it was given and answers Converse, ConverseStream (real event-stream frames, CRCs
 * included) and InvokeModel.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { getAdapter } from '#gateway/providers/registry';
import type {
  AwsCredentials,
  ChatResult,
  CompletionResult,
  EmbeddingResult,
  ImageResult,
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

const KEYS: AwsCredentials = {
  accessKeyId: 'AKIASIMULATOR000001',
  secretAccessKey: 'sim/secret+key/for/tests/0123456789abcdef',
  sessionToken: 'FwoGZXIvYXdzEsimulatedSessionToken',
};
const CLAUDE = 'anthropic.claude-3-5-haiku-20241022-v1:0';

let sim: Simulator;
const adapter = getAdapter('bedrock');
const aws = (creds: AwsCredentials) => ({ kind: 'aws' as const, credentials: () => Promise.resolve(creds) });
const target = (o: Partial<UpstreamTarget> = {}) =>
  makeTarget('bedrock', sim.url, CLAUDE, {
    apiKey: '',
    auth: aws(KEYS),
    options: { region: 'us-east-1' },
    ...o,
  });
const last = () => sim.requests().at(-1)!;

beforeAll(async () => {
  sim = await startSimulator({ aws: KEYS });
});
afterAll(async () => {
  await closeUpstreamPools();
  await sim.close();
});
beforeEach(() => {
  sim.clearFaults();
  sim.clearRequests();
});

describe('bedrock adapter', () => {
  it('declares what it supports', () => {
    expect(adapter.supportsNativeStructuredOutput).toBe(false);
    for (const k of ['chat', 'completion', 'embedding', 'image'] as const)
      expect(adapter.supports(k)).toBe(true);
    for (const k of ['transcription', 'speech'] as const) expect(adapter.supports(k)).toBe(false);
  });

  it('chat: Converse, signed, with system, inferenceConfig and usage', async () => {
    const res = (await adapter.call(
      target(),
      { ...simpleChat('Hello Bedrock'), temperature: 0.3, top_p: 0.9, stop: ['END'] },
      ctx(),
    )) as ChatResult;
    expect(res.content).toBe(`Simulated bedrock/${CLAUDE} reply: Hello Bedrock`);
    expect(res.finish_reason).toBe('stop');
    expect(res.model).toBe(CLAUDE);
    expect(res.usage.prompt_tokens).toBeGreaterThan(0);
    expect(res.usage.total_tokens).toBe(res.usage.prompt_tokens + res.usage.completion_tokens);
    const rec = last();
    // The model id's `:` is percent-encoded in the path, as the AWS SDKs send it.
    expect(rec.path).toBe('/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse');
    expect(rec.headers.authorization).toBe('<redacted>');
    expect(rec.headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/);
    expect(rec.body).toEqual({
      messages: [{ role: 'user', content: [{ text: 'Hello Bedrock' }] }],
      system: [{ text: 'You are terse.' }],
      inferenceConfig: { maxTokens: 200, temperature: 0.3, topP: 0.9, stopSequences: ['END'] },
    });
  });

  it('max_tokens → length; stop sequence → stop', async () => {
    const long = (await adapter.call(
      target(),
      { ...simpleChat('a long prompt'), max_tokens: 2 },
      ctx(),
    )) as ChatResult;
    expect(long.finish_reason).toBe('length');
    const stopped = (await adapter.call(
      target(),
      { ...simpleChat('x'), stop: ['reply'] },
      ctx(),
    )) as ChatResult;
    expect(stopped.finish_reason).toBe('stop');
    expect(stopped.content).toBe('Simulated bedrock/anthropic.claude-3-5-haiku-20241022-v1:0 ');
  });

  it('streaming: ConverseStream event-stream frames → deltas, finish, usage', async () => {
    const events = await collect(adapter.stream(target(), simpleChat('Stream Bedrock'), ctx()));
    expect(streamedText(events)).toContain('Stream Bedrock');
    expect(events.filter((e) => e.type === 'delta').length).toBeGreaterThan(1);
    expect(events.filter((e) => e.type === 'finish')).toEqual([{ type: 'finish', finish_reason: 'stop' }]);
    const usage = events.at(-1);
    expect(usage?.type === 'usage' && usage.usage.completion_tokens).toBeGreaterThan(0);
    expect(last().path).toBe('/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse-stream');
    expect(last().headers.accept).toBe('application/vnd.amazon.eventstream');
  });

  it('a corrupted CRC mid-stream → UPSTREAM_BAD_RESPONSE after the content before it', async () => {
    sim.addFault({ match: { provider: 'bedrock' }, corruptCrc: true, times: 1 });
    const got: string[] = [];
    const err = await failure(async () => {
      for await (const ev of adapter.stream(target(), simpleChat('crc'), ctx()))
        if (ev.type === 'delta' && ev.content) got.push(ev.content);
    });
    expect(err.code).toBe('UPSTREAM_BAD_RESPONSE');
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/corrupt event-stream frame.*checksum/);
    expect(got.length).toBeGreaterThan(0);
  });

  it('vision: data URLs become image bytes, s3:// URIs s3Location; web URLs are refused', async () => {
    await adapter.call(
      target(),
      {
        kind: 'chat',
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What?' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
              { type: 'image_url', image_url: { url: 's3://bucket/cat.jpg' } },
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
            { text: 'What?' },
            { image: { format: 'png', source: { bytes: 'iVBORw0KGgo=' } } },
            { image: { format: 'jpeg', source: { s3Location: { uri: 's3://bucket/cat.jpg' } } } },
          ],
        },
      ],
    });
    sim.clearRequests();
    const err = await failure(() =>
      adapter.call(
        target(),
        {
          kind: 'chat',
          messages: [
            { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/cat.png' } }] },
          ],
        },
        ctx(),
      ),
    );
    expect(err.code).toBe('UPSTREAM_UNSUPPORTED');
    expect(sim.requests()).toEqual([]);
  });

  it('tools: toolSpec/toolChoice, toolUse → tool_calls, toolResult round trip', async () => {
    const req = {
      kind: 'chat' as const,
      messages: [{ role: 'user' as const, content: 'Weather in Rome?' }],
      tools: [WEATHER_TOOL],
    };
    const res = (await adapter.call(target(), req, ctx())) as ChatResult;
    expect(res.finish_reason).toBe('tool_calls');
    const tc = res.tool_calls![0]!;
    expect(tc.function.name).toBe('get_weather');
    expect(JSON.parse(tc.function.arguments)).toHaveProperty('city');
    expect(last().body).toMatchObject({
      toolConfig: {
        tools: [
          {
            toolSpec: {
              name: 'get_weather',
              description: 'Weather for a city',
              inputSchema: { json: WEATHER_TOOL.function.parameters },
            },
          },
        ],
      },
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
    expect((last().body as { messages: unknown[] }).messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: [
          { toolUse: { toolUseId: tc.id, name: 'get_weather', input: JSON.parse(tc.function.arguments) } },
        ],
      },
      { role: 'user', content: [{ toolResult: { toolUseId: tc.id, content: [{ text: '{"temp":30}' }] } }] },
    ]);
  });

  it('tool_choice: required → any, named → tool, none → no toolConfig', async () => {
    await adapter.call(target(), { ...simpleChat(), tools: [WEATHER_TOOL], tool_choice: 'required' }, ctx());
    expect(last().body).toMatchObject({ toolConfig: { toolChoice: { any: {} } } });
    await adapter.call(
      target(),
      {
        ...simpleChat(),
        tools: [WEATHER_TOOL],
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
      },
      ctx(),
    );
    expect(last().body).toMatchObject({ toolConfig: { toolChoice: { tool: { name: 'get_weather' } } } });
    const none = (await adapter.call(
      target(),
      { ...simpleChat(), tools: [WEATHER_TOOL], tool_choice: 'none' },
      ctx(),
    )) as ChatResult;
    expect(none.tool_calls).toBeUndefined();
    expect(last().body).not.toHaveProperty('toolConfig');
  });

  it('tools, streaming: contentBlockStart + toolUse input deltas', async () => {
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
    expect(JSON.parse(calls[0]!.arguments)).toHaveProperty('city');
    expect(events.find((e) => e.type === 'finish')).toEqual({ type: 'finish', finish_reason: 'tool_calls' });
  });

  it('structured output: the schema as an instruction, the answer as text', async () => {
    await adapter.call(target(), { ...simpleChat('Who?'), structured: PERSON_SCHEMA }, ctx());
    const system = (last().body as { system: { text: string }[] }).system[0]!.text;
    expect(system).toContain('You are terse.');
    expect(system).toContain(JSON.stringify(PERSON_SCHEMA.schema));
  });

  it('completion kind', async () => {
    const res = (await adapter.call(
      target(),
      { kind: 'completion', prompt: 'Finish this' },
      ctx(),
    )) as CompletionResult;
    expect(res.kind).toBe('completion');
    expect(res.text).toContain('Finish this');
    expect(last().body).toEqual({ messages: [{ role: 'user', content: [{ text: 'Finish this' }] }] });
  });

  it('completion kind with an end user: requestMetadata.user, as for chat', async () => {
    await adapter.call(target(), { kind: 'completion', prompt: 'Finish this', user: 'end-user-7' }, ctx());
    expect(last().body).toMatchObject({ requestMetadata: { user: 'end-user-7' } });
  });

  it('embeddings: Titan one text per InvokeModel call, token counts summed', async () => {
    const res = (await adapter.call(
      target({ model: 'amazon.titan-embed-text-v2:0' }),
      { kind: 'embedding', input: ['alpha', 'beta gamma'], dimensions: 256 },
      ctx(),
    )) as EmbeddingResult;
    expect(res.embeddings).toHaveLength(2);
    expect((res.embeddings[0] as number[]).length).toBe(256);
    expect(res.usage.prompt_tokens).toBe(2 + 3);
    const bodies = sim.requests().map((r) => [r.path, r.body]);
    expect(bodies).toEqual([
      ['/model/amazon.titan-embed-text-v2%3A0/invoke', { inputText: 'alpha', dimensions: 256 }],
      ['/model/amazon.titan-embed-text-v2%3A0/invoke', { inputText: 'beta gamma', dimensions: 256 }],
    ]);
  });

  it('embeddings: Cohere in one call, usage from the count header, base64 on request', async () => {
    const res = (await adapter.call(
      target({ model: 'cohere.embed-english-v3' }),
      { kind: 'embedding', input: ['a', 'b', 'c'], encoding_format: 'base64' },
      ctx(),
    )) as EmbeddingResult;
    expect(res.embeddings).toHaveLength(3);
    expect(typeof res.embeddings[0]).toBe('string');
    expect(res.usage.prompt_tokens).toBe(3);
    expect(sim.requests().map((r) => r.body)).toEqual([
      { texts: ['a', 'b', 'c'], input_type: 'search_document', embedding_types: ['float'] },
    ]);
  });

  it('images: Titan Image Generator TEXT_IMAGE; data: URLs unless b64_json', async () => {
    const res = (await adapter.call(
      target({ model: 'amazon.titan-image-generator-v2:0' }),
      { kind: 'image', prompt: 'a red fox', n: 2, size: '1024x1024', quality: 'hd' },
      ctx(),
    )) as ImageResult;
    expect(res.images).toHaveLength(2);
    expect(res.images[0]!.url).toMatch(/^data:image\/png;base64,/);
    expect(last().body).toEqual({
      taskType: 'TEXT_IMAGE',
      textToImageParams: { text: 'a red fox' },
      imageGenerationConfig: { numberOfImages: 2, width: 1024, height: 1024, quality: 'premium' },
    });
    const b64 = (await adapter.call(
      target({ model: 'amazon.nova-canvas-v1:0' }),
      { kind: 'image', prompt: 'x', response_format: 'b64_json' },
      ctx(),
    )) as ImageResult;
    expect(b64.images[0]!.b64_json).toBeTruthy();
  });

  it('a model family without an InvokeModel schema here is refused before anything is sent', async () => {
    const err = await failure(() =>
      adapter.call(
        target({ model: 'meta.llama3-8b-instruct-v1:0' }),
        { kind: 'embedding', input: 'x' },
        ctx(),
      ),
    );
    expect(err.code).toBe('UPSTREAM_UNSUPPORTED');
    expect(sim.requests()).toEqual([]);
  });

  it('a signature made with the wrong secret → 403 InvalidSignatureException, not retryable', async () => {
    const err = await failure(() =>
      adapter.call(
        target({ auth: aws({ ...KEYS, secretAccessKey: 'not-the-secret' }) }),
        simpleChat(),
        ctx(),
      ),
    );
    expect(err.status).toBe(403);
    expect(err.providerCode).toBe('InvalidSignatureException');
    expect(err.retryable).toBe(false);
  });

  it('throttling → 429 retryable; ModelErrorException (424) is worth the next slot', async () => {
    sim.addFault({ match: { provider: 'bedrock' }, status: 429, times: 1 });
    const throttled = await failure(() => adapter.call(target(), simpleChat(), ctx()));
    expect([throttled.status, throttled.retryable, throttled.providerCode]).toEqual([
      429,
      true,
      'ThrottlingException',
    ]);
    sim.addFault({ match: { provider: 'bedrock' }, status: 424, times: 1 });
    const modelError = await failure(() => adapter.call(target(), simpleChat(), ctx()));
    expect([modelError.status, modelError.retryable, modelError.providerCode]).toEqual([
      424,
      true,
      'ModelErrorException',
    ]);
  });

  describe('error mapping', () => {
    errorMappingCases({
      sim: () => sim,
      adapter,
      provider: 'bedrock',
      target,
      badCredentials: {
        target: { auth: aws({ accessKeyId: 'AKIAUNKNOWN', secretAccessKey: 'x' }) },
        status: 403,
      },
    });
  });
});
