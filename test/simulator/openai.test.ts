import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Simulator, startSimulator } from './index.ts';
import { json, jsonEvents, parseSse, post, schemaErrors } from './test-helpers.ts';

let sim: Simulator;
const auth = { authorization: 'Bearer sk-test' };

beforeAll(async () => {
  sim = await startSimulator();
});
afterAll(() => sim.close());

interface ChatBody {
  id: string;
  object: string;
  model: string;
  choices: {
    index: number;
    message: {
      role: string;
      content: string | null;
      tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
    };
    finish_reason: string;
  }[];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}
interface Chunk {
  object: string;
  choices: {
    delta: {
      role?: string;
      content?: string | null;
      tool_calls?: { index: number; id?: string; function: { name?: string; arguments: string } }[];
    };
    finish_reason: string | null;
  }[];
  usage?: { total_tokens: number } | null;
}
interface OpenAIError {
  error: { message: string; type: string; param: string | null; code: string | null };
}

const chat = (body: unknown, headers = auth) => post(`${sim.url}/v1/chat/completions`, body, headers);
const hello = [{ role: 'user', content: 'Hello there, simulator' }];

describe('OpenAI chat completions', () => {
  it('answers deterministically with usage', async () => {
    const res = await chat({ model: 'gpt-4o', messages: hello });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toMatch(/^req_/);
    const body = await json<ChatBody>(res);
    expect(body.object).toBe('chat.completion');
    expect(body.model).toBe('gpt-4o');
    expect(body.choices[0]!.message).toMatchObject({
      role: 'assistant',
      content: 'Simulated openai/gpt-4o reply: Hello there, simulator',
    });
    expect(body.choices[0]!.finish_reason).toBe('stop');
    expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens + body.usage.completion_tokens);
    expect(body.usage.completion_tokens).toBe(Math.ceil(body.choices[0]!.message.content!.length / 4));
  });

  it('streams chat.completion.chunk events, a usage chunk and [DONE]', async () => {
    const res = await chat({
      model: 'gpt-4o',
      messages: hello,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const text = await res.text();
    const events = parseSse(text);
    expect(events.at(-1)!.data).toBe('[DONE]');
    const chunks = jsonEvents(text) as Chunk[];
    expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    const content = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(content).toBe('Simulated openai/gpt-4o reply: Hello there, simulator');
    expect(chunks.filter((c) => c.choices[0]?.delta.content).length).toBe(8);
    const usage = chunks.at(-1)!;
    expect(usage.choices).toEqual([]);
    expect(usage.usage!.total_tokens).toBeGreaterThan(0);
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop');
  });

  it('calls the first tool with schema-sampled arguments, and answers after a tool result', async () => {
    const tools = [
      {
        type: 'function',
        function: {
          name: 'get_weather',
          parameters: {
            type: 'object',
            properties: { city: { type: 'string' }, unit: { enum: ['c', 'f'] } },
            required: ['city', 'unit'],
          },
        },
      },
      { type: 'function', function: { name: 'other', parameters: { type: 'object', properties: {} } } },
    ];
    const body = await json<ChatBody>(await chat({ model: 'gpt-4o', messages: hello, tools }));
    const call = body.choices[0]!.message.tool_calls![0]!;
    expect(body.choices[0]!.finish_reason).toBe('tool_calls');
    expect(body.choices[0]!.message.content).toBeNull();
    expect(call.function.name).toBe('get_weather');
    expect(schemaErrors(tools[0]!.function.parameters, JSON.parse(call.function.arguments))).toEqual([]);
    // Seeded from the request: the same request gets the same arguments.
    const again = await json<ChatBody>(await chat({ model: 'gpt-4o', messages: hello, tools }));
    expect(again.choices[0]!.message.tool_calls![0]!.function.arguments).toBe(call.function.arguments);

    const forced = await json<ChatBody>(
      await chat({
        model: 'gpt-4o',
        messages: hello,
        tools,
        tool_choice: { type: 'function', function: { name: 'other' } },
      }),
    );
    expect(forced.choices[0]!.message.tool_calls![0]!.function.name).toBe('other');
    expect(forced.choices[0]!.finish_reason).toBe('stop');

    const none = await json<ChatBody>(
      await chat({ model: 'gpt-4o', messages: hello, tools, tool_choice: 'none' }),
    );
    expect(none.choices[0]!.message.tool_calls).toBeUndefined();

    const after = await json<ChatBody>(
      await chat({
        model: 'gpt-4o',
        tools,
        messages: [
          ...hello,
          {
            role: 'assistant',
            content: null,
            tool_calls: [{ id: call.id, type: 'function', function: call.function }],
          },
          { role: 'tool', tool_call_id: call.id, content: '{"temp":21}' },
        ],
      }),
    );
    expect(after.choices[0]!.finish_reason).toBe('stop');
    expect(after.choices[0]!.message.content).toContain('Simulated openai/gpt-4o reply');
  });

  it('streams tool-call deltas that reassemble into the arguments', async () => {
    const tools = [
      {
        type: 'function',
        function: {
          name: 'lookup',
          parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
        },
      },
    ];
    const text = await (await chat({ model: 'gpt-4o', messages: hello, tools, stream: true })).text();
    const chunks = jsonEvents(text) as Chunk[];
    const first = chunks[0]!.choices[0]!.delta.tool_calls![0]!;
    expect(first).toMatchObject({
      index: 0,
      id: expect.stringMatching(/^call_/),
      function: { name: 'lookup', arguments: '' },
    });
    const args = chunks.map((c) => c.choices[0]?.delta.tool_calls?.[0]?.function.arguments ?? '').join('');
    expect(JSON.parse(args)).toEqual({ q: expect.any(String) });
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('tool_calls');
  });

  it('answers json_schema response formats with conforming JSON, and json_object with JSON', async () => {
    const schema = {
      type: 'object',
      properties: {
        name: { type: 'string' },
        age: { type: 'integer', minimum: 18 },
        tags: { type: 'array', items: { type: 'string' } },
      },
      required: ['name', 'age', 'tags'],
      additionalProperties: false,
    };
    const body = await json<ChatBody>(
      await chat({
        model: 'gpt-4o',
        messages: hello,
        response_format: { type: 'json_schema', json_schema: { name: 'person', schema, strict: true } },
      }),
    );
    const parsed = JSON.parse(body.choices[0]!.message.content!) as { age: number; tags: string[] };
    expect(schemaErrors(schema, parsed)).toEqual([]);
    expect(parsed.age).toBeGreaterThanOrEqual(18);

    const objectMode = await chat({
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'reply in JSON' }],
      response_format: { type: 'json_object' },
    });
    expect(JSON.parse((await json<ChatBody>(objectMode)).choices[0]!.message.content!)).toHaveProperty(
      'reply',
    );

    const noJsonWord = await chat({
      model: 'gpt-4o',
      messages: hello,
      response_format: { type: 'json_object' },
    });
    expect(noJsonWord.status).toBe(400);
    expect((await json<OpenAIError>(noJsonWord)).error.param).toBe('messages');
  });

  it('accepts vision content parts, applies max_tokens and stop', async () => {
    const vision = await chat({
      model: 'gpt-4o',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'low' } },
          ],
        },
      ],
      max_tokens: 3,
    });
    const body = await json<ChatBody>(vision);
    expect(body.choices[0]!.finish_reason).toBe('length');
    expect(body.choices[0]!.message.content).toBe('Simulated op');
    const stopped = await json<ChatBody>(await chat({ model: 'gpt-4o', messages: hello, stop: ['reply'] }));
    expect(stopped.choices[0]!.message.content).toBe('Simulated openai/gpt-4o ');
  });

  it('rejects invalid bodies with the OpenAI 400 error shape', async () => {
    const missing = await chat({ model: 'gpt-4o' });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({
      error: {
        message: "Missing required parameter: 'messages'.",
        type: 'invalid_request_error',
        param: 'messages',
        code: 'missing_required_parameter',
      },
    });
    const wrongType = await json<OpenAIError>(
      await chat({ model: 'gpt-4o', messages: [{ role: 'user', content: 42 }] }),
    );
    expect(wrongType.error.param).toBe('messages[0].content');
    expect(wrongType.error.code).toBe('invalid_value');
    const badJson = await chat('{"model":');
    expect(badJson.status).toBe(400);
    expect((await json<OpenAIError>(badJson)).error.message).toContain('could not parse the JSON body');
  });

  it('refuses missing credentials with 401', async () => {
    const res = await chat({ model: 'gpt-4o', messages: hello }, {} as typeof auth);
    expect(res.status).toBe(401);
    const body = await json<OpenAIError>(res);
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.message).toContain("didn't provide an API key");
  });

  it('answers unknown routes with an OpenAI 404', async () => {
    const res = await post(`${sim.url}/v1/nope`, {}, auth);
    expect(res.status).toBe(404);
    expect((await json<OpenAIError>(res)).error.message).toBe('Invalid URL (POST /v1/nope)');
  });
});

describe('OpenAI other endpoints', () => {
  it('serves legacy completions, streamed too', async () => {
    const res = await post(
      `${sim.url}/v1/completions`,
      { model: 'gpt-3.5-turbo-instruct', prompt: 'Say hi', max_tokens: 100 },
      auth,
    );
    const body = await json<{ object: string; choices: { text: string; finish_reason: string }[] }>(res);
    expect(body.object).toBe('text_completion');
    expect(body.choices[0]!.text).toBe('Simulated openai/gpt-3.5-turbo-instruct reply: Say hi');
    const short = await json<{ choices: { finish_reason: string }[] }>(
      await post(
        `${sim.url}/v1/completions`,
        { model: 'gpt-3.5-turbo-instruct', prompt: 'Say hi to everyone in the whole wide world' },
        auth,
      ),
    );
    expect(short.choices[0]!.finish_reason).toBe('length'); // max_tokens defaults to 16

    const stream = await (
      await post(`${sim.url}/v1/completions`, { model: 'm', prompt: 'x', stream: true, max_tokens: 50 }, auth)
    ).text();
    const chunks = jsonEvents(stream) as { choices: { text: string; finish_reason: string | null }[] }[];
    expect(chunks.map((c) => c.choices[0]!.text).join('')).toBe('Simulated openai/m reply: x');
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop');
    expect(parseSse(stream).at(-1)!.data).toBe('[DONE]');
  });

  it('embeds strings and arrays as floats or base64, honouring dimensions', async () => {
    type Emb = {
      object: string;
      data: { index: number; embedding: number[] | string }[];
      usage: { prompt_tokens: number };
    };
    const one = await json<Emb>(
      await post(`${sim.url}/v1/embeddings`, { model: 'text-embedding-3-small', input: 'hello' }, auth),
    );
    expect(one.object).toBe('list');
    expect(one.data[0]!.embedding).toHaveLength(8);
    const again = await json<Emb>(
      await post(`${sim.url}/v1/embeddings`, { model: 'text-embedding-3-small', input: 'hello' }, auth),
    );
    expect(again.data[0]!.embedding).toEqual(one.data[0]!.embedding);

    const many = await json<Emb>(
      await post(`${sim.url}/v1/embeddings`, { model: 'e', input: ['a', 'b', 'c'], dimensions: 16 }, auth),
    );
    expect(many.data.map((d) => d.index)).toEqual([0, 1, 2]);
    expect(many.data[2]!.embedding).toHaveLength(16);

    const b64 = await json<Emb>(
      await post(`${sim.url}/v1/embeddings`, { model: 'e', input: 'hello', encoding_format: 'base64' }, auth),
    );
    const bytes = Buffer.from(b64.data[0]!.embedding as string, 'base64');
    const floats = Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4));
    for (const [i, v] of (one.data[0]!.embedding as number[]).entries()) {
      expect(floats[i]).toBeCloseTo(v, 5);
    }

    const bad = await post(
      `${sim.url}/v1/embeddings`,
      { model: 'e', input: 'x', encoding_format: 'hex' },
      auth,
    );
    expect(bad.status).toBe(400);
  });

  it('generates images as URLs the simulator serves, or inline base64', async () => {
    type Img = { created: number; data: { url?: string; b64_json?: string }[] };
    const urls = await json<Img>(
      await post(
        `${sim.url}/v1/images/generations`,
        { model: 'dall-e-2', prompt: 'a cat', n: 2, size: '256x256' },
        auth,
      ),
    );
    expect(urls.data).toHaveLength(2);
    const png = await fetch(urls.data[0]!.url!);
    expect(png.headers.get('content-type')).toBe('image/png');
    expect(
      Buffer.from(await png.arrayBuffer())
        .subarray(1, 4)
        .toString(),
    ).toBe('PNG');
    const b64 = await json<Img>(
      await post(
        `${sim.url}/v1/images/generations`,
        { model: 'dall-e-3', prompt: 'a cat', response_format: 'b64_json', quality: 'hd' },
        auth,
      ),
    );
    expect(Buffer.from(b64.data[0]!.b64_json!, 'base64').subarray(1, 4).toString()).toBe('PNG');
  });

  it('transcribes multipart uploads as json, text and verbose_json', async () => {
    const audio = new Uint8Array(32_000).map((_, i) => (i * 7) % 256);
    const form = (format?: string) => {
      const f = new FormData();
      f.append('file', new Blob([audio], { type: 'audio/wav' }), 'clip.wav');
      f.append('model', 'whisper-1');
      if (format) f.append('response_format', format);
      return f;
    };
    const url = `${sim.url}/v1/audio/transcriptions`;
    const asJson = await fetch(url, { method: 'POST', headers: auth, body: form() });
    expect(await asJson.json()).toEqual({ text: 'Simulated transcription of clip.wav (32000 bytes)' });
    const asText = await fetch(url, { method: 'POST', headers: auth, body: form('text') });
    expect(asText.headers.get('content-type')).toContain('text/plain');
    expect(await asText.text()).toBe('Simulated transcription of clip.wav (32000 bytes)\n');
    const verbose = await json<{ task: string; duration: number; segments: unknown[] }>(
      await fetch(url, { method: 'POST', headers: auth, body: form('verbose_json') }),
    );
    expect(verbose).toMatchObject({ task: 'transcribe', duration: 2 });
    expect(verbose.segments).toHaveLength(1);

    const noFile = new FormData();
    noFile.append('model', 'whisper-1');
    const bad = await fetch(url, { method: 'POST', headers: auth, body: noFile });
    expect(bad.status).toBe(400);
    const recorded = sim.requests().at(-2)!;
    expect(recorded.body).toMatchObject({
      fields: { model: 'whisper-1' },
      files: [{ field: 'file', filename: 'clip.wav', size: 32_000 }],
    });
  });

  it('speaks: binary audio with the format content type', async () => {
    const wav = await post(
      `${sim.url}/v1/audio/speech`,
      { model: 'tts-1', input: 'Hello world', voice: 'alloy', response_format: 'wav' },
      auth,
    );
    expect(wav.headers.get('content-type')).toBe('audio/wav');
    const bytes = Buffer.from(await wav.arrayBuffer());
    expect(bytes.subarray(0, 4).toString()).toBe('RIFF');
    expect(bytes.subarray(8, 12).toString()).toBe('WAVE');
    const mp3 = await post(
      `${sim.url}/v1/audio/speech`,
      { model: 'tts-1', input: 'Hello', voice: 'alloy' },
      auth,
    );
    expect(mp3.headers.get('content-type')).toBe('audio/mpeg');
    expect(new Uint8Array(await mp3.arrayBuffer())[0]).toBe(0xff);
    const bad = await post(
      `${sim.url}/v1/audio/speech`,
      { model: 'tts-1', input: 'Hello', voice: 'alloy', response_format: 'ogg' },
      auth,
    );
    expect(bad.status).toBe(400);
  });

  it('lists models', async () => {
    const res = await fetch(`${sim.url}/v1/models`, { headers: auth });
    const body = await json<{ object: string; data: { id: string; object: string }[] }>(res);
    expect(body.object).toBe('list');
    expect(body.data[0]).toMatchObject({ object: 'model' });
  });
});

describe('exact api key', () => {
  it('accepts only the configured key', async () => {
    const strict = await startSimulator({ apiKey: 'sk-right-key-1234' });
    try {
      const ok = await post(
        `${strict.url}/v1/chat/completions`,
        { model: 'm', messages: hello },
        { authorization: 'Bearer sk-right-key-1234' },
      );
      expect(ok.status).toBe(200);
      const wrong = await post(
        `${strict.url}/v1/chat/completions`,
        { model: 'm', messages: hello },
        { authorization: 'Bearer sk-wrong-key-9999' },
      );
      expect(wrong.status).toBe(401);
      const body = await json<OpenAIError>(wrong);
      expect(body.error.code).toBe('invalid_api_key');
      expect(body.error.message).toContain('sk-***9999');
    } finally {
      await strict.close();
    }
  });
});
