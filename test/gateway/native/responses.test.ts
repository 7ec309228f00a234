/** Response bodies of POST /v1/ai: wrapped meta, raw headers, data shapes per type, structured output. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { workflow } from '../../harness/manifests.ts';
import { type ChatCompletion, type Env, post, startEnv, userMsg, type Wrapped } from './helpers.ts';

const PERSON = {
  type: 'object',
  properties: { name: { type: 'string' }, age: { type: 'integer' } },
  required: ['name', 'age'],
  additionalProperties: false,
};
const IMAGE_URL = 'https://example.com/cat.png';

let env: Env;
beforeAll(async () => {
  const wf = (name: string, spec: Record<string, unknown>) =>
    workflow(name, { provider: 'oai', model: 'gpt-4o-mini', ...spec });
  env = await startEnv(() => [
    wf('chat-wf', {
      backups: [
        { provider: 'claude', model: 'claude-haiku-4-5' },
        { provider: 'gem', model: 'gemini-2.5-flash' },
      ],
      cacheFields: ['metadata.customer_id', 'metadata.missing', 'inputs.region', 'metadata.constructor.name'],
    }),
    wf('completion-wf', { requestType: 'completion' }),
    wf('vision-wf', { requestType: 'vision' }),
    wf('embed-wf', { requestType: 'embedding' }),
    wf('image-wf', { requestType: 'image' }),
    wf('audio-wf', { requestType: 'audio' }),
    wf('person-wf', { structuredOutput: { schema: PERSON } }),
    wf('sys-oai', { systemInstructions: 'You are a terse assistant.' }),
    workflow('sys-claude', {
      provider: 'claude',
      model: 'claude-haiku-4-5',
      systemInstructions: 'You are a terse assistant.',
    }),
    workflow('via-openai', { provider: 'oai', model: 'gpt-4o-mini' }),
    workflow('via-anthropic', { provider: 'claude', model: 'claude-haiku-4-5' }),
    workflow('via-gemini', { provider: 'gem', model: 'gemini-2.5-flash' }),
    workflow('via-azure', { provider: 'azure', model: 'gpt4o-deploy' }),
  ]);
});
afterAll(async () => env?.close());
beforeEach(() => env.sim.clearRequests());

const wrapped = <D = ChatCompletion>(body: Record<string, unknown>) =>
  post<Wrapped<D>>(env.gw.url, { format: 'wrapped', ...body });

function expectChatCompletion(data: ChatCompletion, model: string): void {
  expect(data.object).toBe('chat.completion');
  expect(data.id).toMatch(/^chatcmpl-/);
  expect(Number.isInteger(data.created)).toBe(true);
  expect(data.model).toBe(model);
  expect(data.choices).toHaveLength(1);
  expect(data.choices[0]!.index).toBe(0);
  expect(data.choices[0]!.message.role).toBe('assistant');
  expect(typeof data.choices[0]!.message.content).toBe('string');
  expect(typeof data.choices[0]!.finish_reason).toBe('string');
  const u = data.usage;
  for (const k of ['prompt_tokens', 'completion_tokens', 'total_tokens'] as const)
    expect(Number.isInteger(u[k]), k).toBe(true);
  expect(u.total_tokens).toBe(u.prompt_tokens + u.completion_tokens);
}

describe('wrapped format', () => {
  it('carries every meta field, backups with positions and customer_data', async () => {
    const r = await wrapped({
      workflow: 'chat-wf',
      messages: userMsg('hello meta'),
      metadata: { customer_id: 'cust-42', other: 'ignored' },
      inputs: { region: 'eu' },
    });
    expect(r.status).toBe(200);
    expect(Object.keys(r.json).sort()).toEqual(['backups', 'customer_data', 'data', 'meta']);
    const m = r.json.meta;
    expect(m.status).toBe('success');
    expect(m.http_status).toBe(200);
    expect(m.workflow).toBe('chat-wf');
    expect(m.requested_provider).toBe('oai');
    expect(m.requested_model).toBe('gpt-4o-mini');
    expect(m.used_provider).toBe('oai');
    expect(m.used_model).toBe('gpt-4o-mini');
    expect(Number.isInteger(m.duration_ms)).toBe(true);
    expect(m.duration_ms).toBeGreaterThanOrEqual(0);
    // meta.usage is the contract's three counts; data is OpenAI's object, with its cache detail.
    const { prompt_tokens, completion_tokens, total_tokens, prompt_tokens_details } = r.json.data.usage;
    expect(m.usage).toEqual({ prompt_tokens, completion_tokens, total_tokens });
    expect(prompt_tokens_details).toEqual({ cached_tokens: 0 });
    expect(m.usage.total_tokens).toBeGreaterThan(0);
    expect(m.structured_output).toBe(false);
    expect(m.attempts).toHaveLength(1);
    expect(m.attempts[0]).toMatchObject({ provider: 'oai', model: 'gpt-4o-mini', status: 'success' });
    expect(m.request_log_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(m.session_id).toBeUndefined();
    expect(r.json.backups).toEqual([
      { position: 1, provider: 'claude', model: 'claude-haiku-4-5' },
      { position: 2, provider: 'gem', model: 'gemini-2.5-flash' },
    ]);
    expect(r.json.customer_data).toEqual({ 'metadata.customer_id': 'cust-42', 'inputs.region': 'eu' });
    expect(r.json.error).toBeUndefined();
    expectChatCompletion(r.json.data, 'chat-wf');
    expect(r.json.data.choices[0]!.message.content).toContain('hello meta');
  });

  it('customer_data is {} when the request carries none of the cache fields', async () => {
    const r = await wrapped({ workflow: 'chat-wf', messages: userMsg() });
    expect(r.json.customer_data).toEqual({});
  });

  it('cache fields read only what the request sent, not inherited members (metadata.constructor.name)', async () => {
    const r = await wrapped({ workflow: 'chat-wf', messages: userMsg(), metadata: { customer_id: 'c-1' } });
    expect(r.json.customer_data).toEqual({ 'metadata.customer_id': 'c-1' });
    const sent = await wrapped({
      workflow: 'chat-wf',
      messages: userMsg(),
      metadata: { constructor: { name: 'mine' } },
    });
    expect(sent.json.customer_data).toEqual({ 'metadata.constructor.name': 'mine' });
  });

  it('each request gets its own request_log_id', async () => {
    const a = await wrapped({ workflow: 'chat-wf', messages: userMsg() });
    const b = await wrapped({ workflow: 'chat-wf', messages: userMsg() });
    expect(a.json.meta.request_log_id).not.toBe(b.json.meta.request_log_id);
  });

  it('carries the same x-service-* headers as raw, agreeing with meta', async () => {
    const r = await wrapped({ workflow: 'chat-wf', messages: userMsg() });
    expect(r.headers.get('x-service-workflow')).toBe('chat-wf');
    expect(r.headers.get('x-service-used-provider')).toBe(r.json.meta.used_provider);
    expect(r.headers.get('x-service-used-model')).toBe(r.json.meta.used_model);
    expect(r.headers.get('x-service-request-log-id')).toBe(r.json.meta.request_log_id);
  });
});

describe('raw format (the default)', () => {
  it('returns data as the whole body with the x-service-* headers', async () => {
    const r = await post<ChatCompletion>(env.gw.url, { workflow: 'chat-wf', messages: userMsg('raw') });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expectChatCompletion(r.json, 'chat-wf');
    expect(r.json).not.toHaveProperty('meta');
    expect(r.headers.get('x-service-workflow')).toBe('chat-wf');
    expect(r.headers.get('x-service-used-provider')).toBe('oai');
    expect(r.headers.get('x-service-used-model')).toBe('gpt-4o-mini');
    expect(r.headers.get('x-service-duration-ms')).toMatch(/^\d+$/);
  });

  it('format: raw explicitly gives the same shape', async () => {
    const r = await post<ChatCompletion>(env.gw.url, {
      workflow: 'chat-wf',
      messages: userMsg(),
      format: 'raw',
    });
    expectChatCompletion(r.json, 'chat-wf');
  });

  it('raw and wrapped data agree for a structured workflow', async () => {
    const raw = await post<Record<string, unknown>>(env.gw.url, {
      workflow: 'person-wf',
      messages: userMsg(),
    });
    const w = await wrapped<Record<string, unknown>>({ workflow: 'person-wf', messages: userMsg() });
    expect(raw.json).toEqual(w.json.data);
  });
});

describe('data shapes per request type', () => {
  it('completion → chat.completion object', async () => {
    const r = await wrapped({ workflow: 'completion-wf', prompt: 'Once upon a time' });
    expect(r.status).toBe(200);
    expectChatCompletion(r.json.data, 'completion-wf');
    expect(env.sim.requests()[0]!.path).toBe('/v1/completions');
  });

  it('vision → chat.completion object, the image part reaches the provider', async () => {
    const r = await wrapped({
      workflow: 'vision-wf',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this?' },
            { type: 'image_url', image_url: { url: IMAGE_URL, detail: 'low' } },
          ],
        },
      ],
    });
    expect(r.status).toBe(200);
    expectChatCompletion(r.json.data, 'vision-wf');
    expect(JSON.stringify(env.sim.requests()[0]!.body)).toContain(IMAGE_URL);
  });

  it('embedding → list shape with usage {prompt_tokens, total_tokens}', async () => {
    interface EmbeddingList {
      object: string;
      data: { object: string; embedding: number[]; index: number }[];
      model: string;
      usage: Record<string, number>;
    }
    const r = await wrapped<EmbeddingList>({ workflow: 'embed-wf', input: ['alpha', 'beta'] });
    expect(r.status).toBe(200);
    const d = r.json.data;
    expect(d.object).toBe('list');
    expect(d.data).toHaveLength(2);
    d.data.forEach((e, i) => {
      expect(e.object).toBe('embedding');
      expect(e.index).toBe(i);
      expect(e.embedding.length).toBeGreaterThan(0);
      expect(e.embedding.every((x) => typeof x === 'number')).toBe(true);
    });
    expect(typeof d.model).toBe('string');
    expect(Object.keys(d.usage).sort()).toEqual(['prompt_tokens', 'total_tokens']);
    expect(Object.keys(r.json.meta.usage).sort()).toEqual(['prompt_tokens', 'total_tokens']);
  });

  it('image → {created, data: [{url, revised_prompt}]}', async () => {
    interface ImageData {
      created: number;
      data: { url?: string; revised_prompt: string | null }[];
    }
    const r = await wrapped<ImageData>({
      workflow: 'image-wf',
      prompt: 'a red fox',
      n: 2,
      size: '1024x1024',
    });
    expect(r.status).toBe(200);
    expect(Number.isInteger(r.json.data.created)).toBe(true);
    expect(r.json.data.data).toHaveLength(2);
    for (const img of r.json.data.data) {
      expect(img.url).toMatch(/^https?:\/\//);
      expect(img).toHaveProperty('revised_prompt');
    }
    const sent = env.sim.requests()[0]!;
    expect(sent.path).toBe('/v1/images/generations');
    expect(sent.body).toMatchObject({ prompt: 'a red fox', n: 2, size: '1024x1024' });
  });

  it('transcription → {text}', async () => {
    const file = Buffer.from('RIFF....WAVEfmt fake audio bytes').toString('base64');
    const r = await wrapped<{ text: string }>({
      workflow: 'audio-wf',
      file,
      filename: 'a.wav',
      language: 'en',
    });
    expect(r.status).toBe(200);
    expect(Object.keys(r.json.data)).toEqual(['text']);
    expect(typeof r.json.data.text).toBe('string');
    expect(env.sim.requests()[0]!.path).toBe('/v1/audio/transcriptions');
  });

  it.each([
    ['a.wav', 'audio/wav'],
    ['a.__proto__', 'application/octet-stream'],
    ['a.constructor', 'application/octet-stream'],
    ['a.unknown', 'application/octet-stream'],
  ])('transcription upload %s goes upstream as %s', async (filename, contentType) => {
    const file = Buffer.from('fake audio').toString('base64');
    const r = await wrapped<{ text: string }>({ workflow: 'audio-wf', file, filename });
    expect(r.status).toBe(200);
    const sent = env.sim.requests()[0]!.body as { files: { filename: string; contentType: string }[] };
    expect(sent.files[0]).toMatchObject({ filename, contentType });
  });

  it('speech → {audio (base64), format}', async () => {
    const r = await wrapped<{ audio: string; format: string }>({
      workflow: 'audio-wf',
      input: 'read this aloud',
      voice: 'alloy',
      response_format: 'wav',
    });
    expect(r.status).toBe(200);
    expect(Object.keys(r.json.data).sort()).toEqual(['audio', 'format']);
    expect(r.json.data.format).toBe('wav');
    expect(r.json.data.audio).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(r.json.data.audio, 'base64').length).toBeGreaterThan(0);
    expect(env.sim.requests()[0]!.path).toBe('/v1/audio/speech');
  });

  it('speech with a custom voice {id}: sent upstream as given', async () => {
    const r = await wrapped<{ audio: string; format: string }>({
      workflow: 'audio-wf',
      input: 'read this in my voice',
      voice: { id: 'voice_abc' },
    });
    expect(r.status).toBe(200);
    expect(env.sim.requests()[0]!.body).toMatchObject({ voice: { id: 'voice_abc' } });
  });
});

describe('structured output', () => {
  const expectPerson = (d: Record<string, unknown>) => {
    expect(typeof d.name).toBe('string');
    expect(Number.isInteger(d.age)).toBe(true);
    expect(Object.keys(d).sort()).toEqual(['age', 'name']);
  };

  it("the workflow's schema: data is the parsed object, meta.structured_output true", async () => {
    const r = await wrapped<Record<string, unknown>>({ workflow: 'person-wf', messages: userMsg() });
    expect(r.status).toBe(200);
    expect(r.json.meta.structured_output).toBe(true);
    expectPerson(r.json.data);
    const sent = env.sim.requests()[0]!.body as { response_format?: { type: string } };
    expect(sent.response_format?.type).toBe('json_schema');
  });

  it('request response_format as a raw JSON schema', async () => {
    const r = await wrapped<Record<string, unknown>>({
      workflow: 'chat-wf',
      messages: userMsg(),
      response_format: PERSON,
    });
    expect(r.status).toBe(200);
    expect(r.json.meta.structured_output).toBe(true);
    expectPerson(r.json.data);
  });

  it('request response_format as OpenAI {type: json_schema}', async () => {
    const r = await wrapped<Record<string, unknown>>({
      workflow: 'chat-wf',
      messages: userMsg(),
      response_format: { type: 'json_schema', json_schema: { name: 'person', schema: PERSON, strict: true } },
    });
    expect(r.status).toBe(200);
    expect(r.json.meta.structured_output).toBe(true);
    expectPerson(r.json.data);
    const sent = env.sim.requests()[0]!.body as { response_format?: { json_schema?: { name?: string } } };
    expect(sent.response_format?.json_schema?.name).toBe('person');
  });

  it('a request response_format overrides the workflow schema', async () => {
    const other = {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    };
    const r = await wrapped<Record<string, unknown>>({
      workflow: 'person-wf',
      messages: userMsg(),
      response_format: other,
    });
    expect(r.status).toBe(200);
    expect(Object.keys(r.json.data)).toEqual(['city']);
  });

  it('structured_output_schema without a workflow (direct provider + model)', async () => {
    const r = await wrapped<Record<string, unknown>>({
      provider: 'oai',
      model: 'gpt-4o-mini',
      messages: userMsg(),
      structured_output_schema: PERSON,
    });
    expect(r.status).toBe(200);
    expect(r.json.meta.workflow).toBeNull();
    expect(r.json.meta.structured_output).toBe(true);
    expectPerson(r.json.data);
  });

  it('raw: a structured answer that is not an object is still JSON (a string comes quoted)', async () => {
    for (const schema of [{ type: 'string' }, { type: 'integer' }, { type: 'boolean' }]) {
      const r = await post<unknown>(env.gw.url, {
        provider: 'oai',
        model: 'gpt-4o-mini',
        messages: userMsg(),
        structured_output_schema: schema,
      });
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      expect(typeof r.json).toBe(schema.type === 'integer' ? 'number' : schema.type);
    }
  });

  it('structured output works through gemini too (raw format, responseSchema upstream)', async () => {
    const r = await post<Record<string, unknown>>(env.gw.url, {
      provider: 'gem',
      model: 'gemini-2.5-flash',
      messages: userMsg(),
      structured_output_schema: PERSON,
    });
    expect(r.status).toBe(200);
    expectPerson(r.json);
    const sent = env.sim.requests()[0]!.body as { generationConfig?: Record<string, unknown> };
    expect(sent.generationConfig?.responseMimeType).toBe('application/json');
  });
});

describe('system instructions reach the provider', () => {
  it('openai: as a leading system message', async () => {
    const r = await post(env.gw.url, { workflow: 'sys-oai', messages: userMsg('hi') });
    expect(r.status).toBe(200);
    const sent = env.sim.requests()[0]!.body as { messages: { role: string; content: string }[] };
    expect(sent.messages[0]).toEqual({ role: 'system', content: 'You are a terse assistant.' });
    expect(sent.messages[1]).toEqual({ role: 'user', content: 'hi' });
  });

  it('anthropic: as the top-level system field', async () => {
    const r = await post(env.gw.url, { workflow: 'sys-claude', messages: userMsg('hi') });
    expect(r.status).toBe(200);
    const rec = env.sim.requests()[0]!;
    expect(rec.provider).toBe('anthropic');
    const sent = rec.body as { system?: unknown; messages: { role: string }[] };
    expect(JSON.stringify(sent.system)).toContain('You are a terse assistant.');
    expect(sent.messages.every((m) => m.role !== 'system')).toBe(true);
  });
});

describe('one chat through each provider type', () => {
  it.each([
    ['via-openai', 'oai', 'gpt-4o-mini', 'openai', '/v1/chat/completions'],
    ['via-anthropic', 'claude', 'claude-haiku-4-5', 'anthropic', '/v1/messages'],
    ['via-gemini', 'gem', 'gemini-2.5-flash', 'gemini', ':generateContent'],
    [
      'via-azure',
      'azure',
      'gpt4o-deploy',
      'azure-openai',
      '/openai/deployments/gpt4o-deploy/chat/completions',
    ],
  ])('%s → used_provider %s', async (wf, providerName, model, simProvider, path) => {
    const r = await wrapped({ workflow: wf, messages: userMsg('ping'), temperature: 0.3, max_tokens: 50 });
    expect(r.status).toBe(200);
    expect(r.json.meta.used_provider).toBe(providerName);
    expect(r.json.meta.used_model).toBe(model);
    expectChatCompletion(r.json.data, wf);
    expect(r.json.data.choices[0]!.message.content).toContain('ping');
    const sent = env.sim.requests();
    expect(sent).toHaveLength(1);
    expect(sent[0]!.provider).toBe(simProvider);
    expect(sent[0]!.path).toContain(path);
  });
});
