/**
 * The compatible surface as the official `openai` SDK sees it: real gateway, real simulator, real
 * sockets. Every call runs under both SDK base URLs, `${url}/v1` and `${url}/api/v1`.
 */
import OpenAI, { toFile } from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CompatEnv,
  CREATED,
  expectedModel,
  MAIN_PROJECT_WORKFLOWS,
  rawJson,
  SCHEMA,
  smallWav,
  startCompatEnv,
} from './helpers.ts';

let env: CompatEnv;
beforeAll(async () => {
  env = await startCompatEnv();
});
afterAll(async () => {
  await env?.close();
});

const WEATHER_TOOL: ChatCompletionTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather for a city.',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } },
      required: ['city', 'unit'],
      additionalProperties: false,
    },
  },
};

describe.each(['/v1', '/api/v1'] as const)('openai SDK with baseURL <gateway>%s', (prefix) => {
  const sdk = () => env.client({ prefix });

  it('chat.completions.create: a plain completion in the OpenAI shape, model = workflow name', async () => {
    const before = Math.floor(Date.now() / 1000);
    const { data: c, response } = await sdk()
      .chat.completions.create({
        model: 'chat',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Say hello to the gateway' },
        ],
        temperature: 0.2,
        max_tokens: 64,
        n: 1,
      })
      .withResponse();
    expect(response.status).toBe(200);
    expect(c.id).toMatch(/^chatcmpl-/);
    expect(c.object).toBe('chat.completion');
    expect(Number.isInteger(c.created)).toBe(true);
    expect(c.created).toBeGreaterThanOrEqual(before);
    expect(c.created).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
    expect(c.model).toBe('chat');
    expect(c.system_fingerprint).toBe('switchyard-compat-v1');
    expect(c.choices).toHaveLength(1);
    const choice = c.choices[0]!;
    expect(choice.index).toBe(0);
    expect(choice.message.role).toBe('assistant');
    expect(choice.message.content).toBe('Simulated openai/gpt-4o-mini reply: Say hello to the gateway');
    expect(choice.finish_reason).toBe('stop');
    const u = c.usage!;
    for (const n of [u.prompt_tokens, u.completion_tokens, u.total_tokens]) {
      expect(Number.isInteger(n)).toBe(true);
      expect(n).toBeGreaterThan(0);
    }
    expect(u.total_tokens).toBe(u.prompt_tokens + u.completion_tokens);
    expect(response.headers.get('x-service-workflow')).toBe('chat');
    expect(response.headers.get('x-service-used-provider')).toBe('oai');
    expect(response.headers.get('x-service-used-model')).toBe('gpt-4o-mini');
  });

  it('chat.completions.create through a non-OpenAI provider keeps the OpenAI shape', async () => {
    const c = await sdk().chat.completions.create({
      model: 'claude-chat',
      messages: [{ role: 'user', content: 'hi claude' }],
      max_tokens: 32,
    });
    expect(c.object).toBe('chat.completion');
    expect(c.model).toBe('claude-chat');
    expect(c.choices[0]!.message.content).toBe('Simulated anthropic/claude-haiku-4-5 reply: hi claude');
    expect(c.choices[0]!.finish_reason).toBe('stop');
    expect(c.system_fingerprint).toBe('switchyard-compat-v1');
  });

  it('fails over to the backup when the primary answers 503, invisibly to the client', async () => {
    const { data: c, response } = await sdk()
      .chat.completions.create({ model: 'failover-chat', messages: [{ role: 'user', content: 'fail over' }] })
      .withResponse();
    expect(c.model).toBe('failover-chat');
    expect(c.choices[0]!.message.content).toBe('Simulated anthropic/claude-haiku-4-5 reply: fail over');
    expect(response.headers.get('x-service-used-provider')).toBe('claude');
    expect(response.headers.get('x-service-used-model')).toBe('claude-haiku-4-5');
  });

  it('streams: chunks assemble the content, include_usage adds a usage chunk, finish_reason arrives', async () => {
    const stream = await sdk().chat.completions.create({
      model: 'chat',
      messages: [{ role: 'user', content: 'stream me something' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.length).toBeGreaterThan(2);
    const ids = new Set(chunks.map((c) => c.id));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toMatch(/^chatcmpl-/);
    for (const c of chunks) {
      expect(c.object).toBe('chat.completion.chunk');
      expect(c.model).toBe('chat');
      expect(Number.isInteger(c.created)).toBe(true);
      expect(c.system_fingerprint).toBe('switchyard-compat-v1');
    }
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    const content = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(content).toContain('Simulated openai/gpt-4o-mini reply: stream me something');
    const finishes = chunks.flatMap((c) => c.choices.map((ch) => ch.finish_reason)).filter((f) => f !== null);
    expect(finishes).toEqual(['stop']);
    const last = chunks[chunks.length - 1]!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toBeDefined();
    expect(last.usage!.completion_tokens).toBeGreaterThan(0);
    expect(last.usage!.total_tokens).toBe(last.usage!.prompt_tokens + last.usage!.completion_tokens);
    expect(chunks.slice(0, -1).every((c) => c.usage === undefined || c.usage === null)).toBe(true);
  });

  it('streams without include_usage: no usage chunk', async () => {
    const stream = await sdk().chat.completions.create({
      model: 'claude-chat',
      messages: [{ role: 'user', content: 'no usage please' }],
      stream: true,
    });
    const chunks: ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.every((c) => c.usage === undefined || c.usage === null)).toBe(true);
    expect(chunks.every((c) => c.choices.length === 1)).toBe(true);
    expect(chunks.map((c) => c.choices[0]!.delta.content ?? '').join('')).toContain(
      'Simulated anthropic/claude-haiku-4-5 reply: no usage please',
    );
    expect(chunks[chunks.length - 1]!.choices[0]!.finish_reason).toBe('stop');
  });

  it('a stream fails over before its first byte (primary 503 → backup)', async () => {
    const { data: stream, response } = await sdk()
      .chat.completions.create({
        model: 'failover-chat',
        messages: [{ role: 'user', content: 'stream fail over' }],
        stream: true,
      })
      .withResponse();
    expect(response.headers.get('x-service-used-provider')).toBe('claude');
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toContain('Simulated anthropic/claude-haiku-4-5 reply: stream fail over');
  });

  it('tools: tool_calls come back with parseable arguments, and a second turn answers with the tool result', async () => {
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris?' }];
    const first = await sdk().chat.completions.create({
      model: 'chat',
      messages,
      tools: [WEATHER_TOOL],
      tool_choice: 'auto',
    });
    const choice = first.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    const calls = choice.message.tool_calls ?? [];
    expect(calls).toHaveLength(1);
    const call = calls[0]!;
    expect(call.type).toBe('function');
    if (call.type !== 'function') throw new Error('expected a function tool call');
    expect(typeof call.id).toBe('string');
    expect(call.id.length).toBeGreaterThan(0);
    expect(call.function.name).toBe('get_weather');
    const args = JSON.parse(call.function.arguments) as Record<string, unknown>;
    expect(typeof args.city).toBe('string');
    expect(['c', 'f']).toContain(args.unit);

    messages.push(choice.message, {
      role: 'tool',
      tool_call_id: call.id,
      content: JSON.stringify({ temperature: 21, unit: args.unit }),
    });
    const second = await sdk().chat.completions.create({
      model: 'chat',
      messages,
      tools: [WEATHER_TOOL],
      tool_choice: 'auto',
    });
    expect(second.choices[0]!.finish_reason).toBe('stop');
    expect(second.choices[0]!.message.tool_calls ?? []).toHaveLength(0);
    expect(typeof second.choices[0]!.message.content).toBe('string');
    expect(second.choices[0]!.message.content!.length).toBeGreaterThan(0);
  });

  it('tools: a forced tool choice through a non-OpenAI provider', async () => {
    const c = await sdk().chat.completions.create({
      model: 'claude-chat',
      messages: [{ role: 'user', content: 'Weather in Oslo?' }],
      tools: [WEATHER_TOOL],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    });
    const call = c.choices[0]!.message.tool_calls?.[0];
    expect(call?.type).toBe('function');
    if (call?.type !== 'function') throw new Error('expected a function tool call');
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toMatchObject({ city: expect.any(String) });
  });

  it('structured output: response_format json_schema gives JSON content matching the schema', async () => {
    const c = await sdk().chat.completions.create({
      model: 'chat',
      messages: [{ role: 'user', content: 'Describe a person.' }],
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'person', strict: true, schema: SCHEMA as unknown as Record<string, unknown> },
      },
    });
    expect(c.object).toBe('chat.completion');
    expect(c.choices[0]!.finish_reason).toBe('stop');
    const parsed = JSON.parse(c.choices[0]!.message.content ?? '') as Record<string, unknown>;
    expect(Object.keys(parsed).sort()).toEqual(['age', 'name', 'tags']);
    expect(typeof parsed.name).toBe('string');
    expect(Number.isInteger(parsed.age)).toBe(true);
    expect(parsed.age as number).toBeGreaterThanOrEqual(0);
    expect(Array.isArray(parsed.tags)).toBe(true);
  });

  it("structured output: the workflow's own schema applies without response_format", async () => {
    const c = await sdk().chat.completions.create({
      model: 'extract',
      messages: [{ role: 'user', content: 'Alice, 31, likes tea' }],
    });
    const parsed = JSON.parse(c.choices[0]!.message.content ?? '') as Record<string, unknown>;
    expect(Object.keys(parsed).sort()).toEqual(['age', 'name', 'tags']);
  });

  it('structured output streamed: the assembled content is JSON matching the schema', async () => {
    const stream = await sdk().chat.completions.create({
      model: 'chat',
      messages: [{ role: 'user', content: 'Describe a person, streamed.' }],
      response_format: {
        type: 'json_schema',
        json_schema: { name: 'person', strict: true, schema: SCHEMA as unknown as Record<string, unknown> },
      },
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    const parsed = JSON.parse(text) as Record<string, unknown>;
    expect(Object.keys(parsed).sort()).toEqual(['age', 'name', 'tags']);
  });

  it('vision: text and image_url parts (data: URI) in one user message', async () => {
    const png = `data:image/png;base64,${Buffer.from(
      '89504e470d0a1a0a0000000d4948445200000001000000010800000000' +
        '3a7e9b550000000a49444154789c63600000000200015d0b2ba90000000049454e44ae426082',
      'hex',
    ).toString('base64')}`;
    const c = await sdk().chat.completions.create({
      model: 'vision',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is in this picture?' },
            { type: 'image_url', image_url: { url: png, detail: 'low' } },
          ],
        },
      ],
    });
    expect(c.model).toBe('vision');
    expect(c.choices[0]!.message.content).toBe(
      'Simulated gemini/gemini-2.5-flash reply: What is in this picture?',
    );
  });

  it('the parameters SDKs commonly send are accepted', async () => {
    const c = await sdk().chat.completions.create({
      model: 'chat',
      messages: [
        { role: 'developer', content: 'Be terse.' },
        { role: 'user', content: 'many params' },
      ],
      max_completion_tokens: 50,
      stop: ['\n\n'],
      seed: 7,
      user: 'user-123',
      top_p: 0.9,
      presence_penalty: 0.1,
      frequency_penalty: 0.1,
      parallel_tool_calls: false,
      logprobs: false,
      n: 1,
      stream: false,
    });
    expect(c.choices[0]!.message.content).toBe('Simulated openai/gpt-4o-mini reply: many params');
  });

  it('embeddings.create: list of float embeddings, model = workflow name, usage without completion tokens', async () => {
    const e = await sdk().embeddings.create({
      model: 'embed',
      input: ['first text', 'second text'],
      encoding_format: 'float',
    });
    expect(e.object).toBe('list');
    expect(e.model).toBe('embed');
    expect(e.data).toHaveLength(2);
    e.data.forEach((d, i) => {
      expect(d.object).toBe('embedding');
      expect(d.index).toBe(i);
      expect(d.embedding.length).toBeGreaterThan(0);
      expect(d.embedding.every((x) => typeof x === 'number')).toBe(true);
    });
    expect(e.data[0]!.embedding).not.toEqual(e.data[1]!.embedding);
    expect(e.usage.prompt_tokens).toBeGreaterThan(0);
    expect(e.usage.total_tokens).toBe(e.usage.prompt_tokens);
    expect(e.usage).not.toHaveProperty('completion_tokens');
  });

  it('embeddings.create with the SDK default (base64) encoding decodes to floats', async () => {
    // Without encoding_format the SDK asks for base64 and decodes it itself.
    const e = await sdk().embeddings.create({ model: 'embed', input: 'one text' });
    expect(e.data).toHaveLength(1);
    expect(e.data[0]!.embedding.length).toBeGreaterThan(0);
    expect(e.data[0]!.embedding.every((x) => Number.isFinite(x))).toBe(true);
  });

  it('images.generate: created + data[{url | b64_json, revised_prompt}]', async () => {
    const img = await sdk().images.generate({
      model: 'image',
      prompt: 'a lighthouse at dusk',
      size: '1024x1024',
      n: 1,
    });
    expect(Number.isInteger(img.created)).toBe(true);
    expect(img.data).toHaveLength(1);
    const d = img.data![0]!;
    expect(Boolean(d.url) || Boolean(d.b64_json)).toBe(true);
    expect(d).toHaveProperty('revised_prompt');
  });

  it('audio.transcriptions.create: multipart upload of a WAV via toFile', async () => {
    const wav = smallWav();
    const t = await sdk().audio.transcriptions.create({
      model: 'audio',
      file: await toFile(wav, 'hello.wav', { type: 'audio/wav' }),
      language: 'en',
    });
    expect(t.text).toBe(`Simulated transcription of hello.wav (${wav.length} bytes)`);
    const forwarded = env.sim
      .requests()
      .filter((r) => r.path.endsWith('/audio/transcriptions'))
      .at(-1);
    expect(forwarded).toBeDefined();
  });

  it('audio.transcriptions.create with response_format text returns the plain transcript', async () => {
    const wav = smallWav(100);
    const t = await sdk().audio.transcriptions.create({
      model: 'audio',
      file: await toFile(wav, 'short.wav', { type: 'audio/wav' }),
      response_format: 'text',
    });
    expect(t).toBe(`Simulated transcription of short.wav (${wav.length} bytes)`);
  });

  it('audio.transcriptions.create with response_format verbose_json', async () => {
    const wav = smallWav(100);
    const t = await sdk().audio.transcriptions.create({
      model: 'audio',
      file: await toFile(wav, 'verbose.wav', { type: 'audio/wav' }),
      response_format: 'verbose_json',
    });
    expect(t.text).toBe(`Simulated transcription of verbose.wav (${wav.length} bytes)`);
    expect(typeof t.language).toBe('string');
    expect(typeof t.duration).toBe('number');
  });

  it('images.generate with response_format b64_json returns image bytes', async () => {
    const img = await sdk().images.generate({
      model: 'image',
      prompt: 'a tiny dot',
      response_format: 'b64_json',
    });
    const b64 = img.data![0]!.b64_json!;
    expect(Buffer.from(b64, 'base64').subarray(1, 4).toString('ascii')).toBe('PNG');
  });

  it('embeddings.create with dimensions', async () => {
    const e = await sdk().embeddings.create({
      model: 'embed',
      input: 'x',
      dimensions: 4,
      encoding_format: 'float',
    });
    expect(e.data[0]!.embedding).toHaveLength(4);
  });

  it('audio.speech.create: binary audio with an audio content type', async () => {
    const res = await sdk().audio.speech.create({
      model: 'audio',
      input: 'Hello from the gateway',
      voice: 'alloy',
      response_format: 'wav',
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^audio\/wav/);
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(bytes.length).toBeGreaterThan(44);
    expect(bytes.subarray(0, 4).toString('ascii')).toBe('RIFF');
    expect(bytes.subarray(8, 12).toString('ascii')).toBe('WAVE');
  });

  it('audio.speech.create with a custom voice {id}: the provider receives the voice as sent', async () => {
    const res = await sdk().audio.speech.create({
      model: 'audio',
      input: 'Hello in my own voice',
      voice: { id: 'voice_1234' },
      response_format: 'wav',
    });
    expect(res.status).toBe(200);
    expect(
      Buffer.from(await res.arrayBuffer())
        .subarray(0, 4)
        .toString('ascii'),
    ).toBe('RIFF');
    const forwarded = env.sim
      .requests()
      .filter((r) => r.path.endsWith('/audio/speech'))
      .at(-1);
    expect(forwarded?.body).toMatchObject({ input: 'Hello in my own voice', voice: { id: 'voice_1234' } });
  });

  it('audio.speech.create refuses a voice that is neither a name nor {id}, naming the field', async () => {
    for (const voice of [{}, { id: 'voice_1', name: 'x' }, 7]) {
      const err = await sdk()
        .audio.speech.create({ model: 'audio', input: 'x', voice: voice as { id: string } })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(err).toBeInstanceOf(OpenAI.BadRequestError);
      const body = (err as InstanceType<typeof OpenAI.BadRequestError>).error as { param?: string };
      expect(body.param).toBe('voice');
    }
  });

  it('models.list: one model object per workflow of the project, exactly', async () => {
    const page = await sdk().models.list();
    const models = [...page.data].sort((a, b) => a.id.localeCompare(b.id));
    const expected = [...MAIN_PROJECT_WORKFLOWS].sort().map(expectedModel);
    expect(models).toStrictEqual(expected);
    // Workflows of other projects never show up.
    expect(models.map((m) => m.id)).not.toContain('closed-chat');
    const sandbox = models.find((m) => m.id === 'sandbox') as unknown as ReturnType<typeof expectedModel>;
    expect(sandbox.service_metadata.test_mode).toBe(true);
    expect(sandbox.created).toBe(CREATED);
  });

  it('models.list: the raw body is {object: list, data}', async () => {
    const r = await rawJson(env.gw.url, `${prefix}/models`);
    expect(r.status).toBe(200);
    expect(Object.keys(r.json as object).sort()).toEqual(['data', 'object']);
    expect((r.json as { object: string }).object).toBe('list');
  });

  it('models.retrieve: the same object as in the list', async () => {
    for (const name of ['chat', 'embed', 'sandbox', 'failover-chat']) {
      const m = await sdk().models.retrieve(name);
      expect(m).toStrictEqual(expectedModel(name));
    }
  });

  it('models.retrieve of an unknown workflow: NotFoundError model_not_found', async () => {
    const err = await sdk()
      .models.retrieve('no-such-workflow')
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(OpenAI.NotFoundError);
    const e = err as InstanceType<typeof OpenAI.NotFoundError>;
    expect(e.status).toBe(404);
    expect(e.code).toBe('model_not_found');
    expect(e.param).toBe('model');
  });

  it('GET provider-models: the legacy list grouped by provider', async () => {
    const r = await rawJson(env.gw.url, `${prefix}/provider-models`);
    expect(r.status).toBe(200);
    const body = r.json as {
      object: string;
      data: {
        provider: string;
        type: string;
        models: { id: string; object: string; request_types: string[] }[];
      }[];
    };
    expect(body.object).toBe('list');
    const byName = new Map(body.data.map((p) => [p.provider, p]));
    expect([...byName.keys()].sort()).toEqual(['azure', 'claude', 'gem', 'oai']);
    expect(byName.get('oai')!.type).toBe('openai');
    expect(byName.get('claude')!.type).toBe('anthropic');
    const oaiModels = byName.get('oai')!.models.map((m) => m.id);
    expect(oaiModels).toContain('gpt-4o-mini');
    for (const m of byName.get('oai')!.models) {
      expect(m.object).toBe('model');
      expect(m.request_types).toContain('chat');
    }
    expect(byName.get('claude')!.models.map((m) => m.id)).toContain('claude-haiku-4-5');
  });
});
