/**
 * POST /v1/completions (OpenAI's legacy Completions API on completion workflows) as the official
 * `openai` SDK sees it, and the unknown-parameter rule of the embeddings, images and speech
 * endpoints: real gateway, real simulator, real sockets, under both SDK base URLs.
 */
import OpenAI, { type APIError } from 'openai';
import type { Completion, CompletionCreateParamsNonStreaming } from 'openai/resources/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAPPED_COMPLETION_PARAMS, UNSUPPORTED_COMPLETION_PARAMS } from '#gateway/requests/compat-completion';
import { compatCompletionBody } from '#gateway/requests/compat-schema';
import { NO_AI_SCOPE_KEY } from '../../harness/manifests.ts';
import {
  API_KEY,
  type CompatEnv,
  type ErrorWant,
  expectEnvelope,
  rawJson,
  startCompatEnv,
} from './helpers.ts';

let env: CompatEnv;
beforeAll(async () => {
  env = await startCompatEnv();
});
afterAll(async () => {
  await env?.close();
});

type Want = ErrorWant;

async function expectSdkError(call: Promise<unknown>, want: Want): Promise<APIError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'the SDK call must throw').toBeInstanceOf(OpenAI.APIError);
  const e = err as APIError;
  expect({ status: e.status, type: e.type, code: e.code, param: e.param ?? null }).toEqual(want);
  return e;
}

const refusal = (param: string): Want => ({
  status: 400,
  type: 'invalid_request_error',
  code: 'unsupported_parameter',
  param,
});

/** For bodies the SDK's types do not describe. */
const params = (p: Record<string, unknown>) => p as unknown as CompletionCreateParamsNonStreaming;

/** The request-log entry of one request of `workflow`, once the gateway has written it. */
async function logEntry(workflow: string, id: string): Promise<Record<string, unknown>> {
  await env.gw.gateway.state.flush();
  const res = await fetch(`${env.gw.url}/v1/request-logs?workflow=${workflow}&limit=500`, {
    headers: { authorization: `Bearer ${NO_AI_SCOPE_KEY}` },
  });
  const page = (await res.json()) as { data: Record<string, unknown>[] };
  const entry = page.data.find((e) => e.request_log_id === id);
  if (!entry) throw new Error(`no request-log entry ${id}`);
  return entry;
}

/** What the simulator received last on a path ending with `suffix`. */
function lastSent(suffix: string): { provider: string; path: string; body: Record<string, unknown> } {
  const r = env.sim
    .requests()
    .filter((x) => x.path.endsWith(suffix))
    .at(-1);
  if (!r) throw new Error(`nothing was sent to ${suffix}`);
  return r as { provider: string; path: string; body: Record<string, unknown> };
}

it('every parameter of the completions schema is either mapped or refused, and no other', () => {
  const listed = [...MAPPED_COMPLETION_PARAMS, ...UNSUPPORTED_COMPLETION_PARAMS].sort();
  expect(Object.keys(compatCompletionBody.shape).sort()).toEqual(listed);
});

describe.each(['/v1', '/api/v1'] as const)('completions with baseURL <gateway>%s', (prefix) => {
  const sdk = () => env.client({ prefix });
  const raw = (path: string, body: unknown) => rawJson(env.gw.url, `${prefix}${path}`, { body });

  it('completions.create: a text_completion in OpenAI’s shape, the prompt and limits sent to the provider, logged', async () => {
    env.sim.clearRequests();
    const before = Math.floor(Date.now() / 1000);
    const { data: c, response } = await sdk()
      .completions.create({
        model: 'complete',
        prompt: 'Write a haiku',
        max_tokens: 64,
        stop: ['\n\n'],
        temperature: 0.3,
        top_p: 0.9,
        seed: 7,
        presence_penalty: 0.1,
        frequency_penalty: 0.2,
        user: 'user-1',
        n: 1,
        best_of: 1,
        echo: false,
        logprobs: null,
        suffix: null,
      })
      .withResponse();
    expect(response.status).toBe(200);
    expect(c.id).toMatch(/^cmpl-/);
    expect(c.object).toBe('text_completion');
    expect(c.created).toBeGreaterThanOrEqual(before);
    expect(c.model).toBe('complete');
    expect(c.choices).toEqual([
      {
        text: 'Simulated openai/gpt-4o-mini reply: Write a haiku',
        index: 0,
        logprobs: null,
        finish_reason: 'stop',
      },
    ]);
    const u = c.usage!;
    expect(u.prompt_tokens).toBeGreaterThan(0);
    expect(u.completion_tokens).toBeGreaterThan(0);
    expect(u.total_tokens).toBe(u.prompt_tokens + u.completion_tokens);
    expect(response.headers.get('x-service-workflow')).toBe('complete');
    expect(response.headers.get('x-service-used-provider')).toBe('oai');
    expect(response.headers.get('x-service-used-model')).toBe('gpt-4o-mini');
    expect(response.headers.get('x-service-duration-ms')).toMatch(/^\d+$/);

    const sent = lastSent('/completions');
    expect(sent.path).toBe('/v1/completions');
    expect(sent.body).toMatchObject({
      model: 'gpt-4o-mini',
      prompt: 'Write a haiku',
      max_tokens: 64,
      stop: ['\n\n'],
      temperature: 0.3,
      top_p: 0.9,
      seed: 7,
      presence_penalty: 0.1,
      frequency_penalty: 0.2,
      user: 'user-1',
    });
    expect(sent.body).not.toHaveProperty('stream');

    const logId = response.headers.get('x-service-request-log-id')!;
    const entry = await logEntry('complete', logId);
    expect(entry).toMatchObject({
      surface: 'compat',
      method: 'POST',
      path: `${prefix}/completions`,
      workflow: 'complete',
      status: 'success',
      http_status: 200,
      used_provider: 'oai',
      used_model: 'gpt-4o-mini',
      stream: false,
    });
    expect(entry.usage).toMatchObject({
      prompt_tokens: u.prompt_tokens,
      completion_tokens: u.completion_tokens,
    });
  });

  it('max_tokens and stop reach the provider: a short budget ends with length, a stop sequence cuts the text', async () => {
    const short = await sdk().completions.create({
      model: 'complete',
      prompt: 'count to ten',
      max_tokens: 3,
    });
    expect(short.choices[0]!.text).toBe('Simulated op');
    expect(short.choices[0]!.finish_reason).toBe('length');
    expect(lastSent('/completions').body.max_tokens).toBe(3);

    const cut = await sdk().completions.create({
      model: 'complete',
      prompt: ['alpha beta gamma'],
      stop: 'beta',
      max_tokens: 64,
    });
    expect(cut.choices[0]!.text).toBe('Simulated openai/gpt-4o-mini reply: alpha ');
    expect(cut.choices[0]!.finish_reason).toBe('stop');
    expect(lastSent('/completions').body).toMatchObject({ prompt: 'alpha beta gamma', stop: ['beta'] });
  });

  it('null sampling parameters mean "not set", as OpenAI reads them: nothing of them is sent', async () => {
    const r = await raw('/completions', {
      model: 'complete',
      prompt: 'Write a haiku',
      temperature: null,
      top_p: null,
      max_tokens: null,
      stop: null,
      n: null,
      stream: null,
    });
    expect(r.status).toBe(200);
    const body = lastSent('/completions').body;
    for (const k of ['temperature', 'top_p', 'max_tokens', 'stop', 'n', 'stream'])
      expect(body).not.toHaveProperty(k);
  });

  it('a completion workflow on Anthropic: the prompt as one user message, stop as stop_sequences, user as metadata.user_id', async () => {
    const c = await sdk().completions.create({
      model: 'claude-complete',
      prompt: 'hello claude',
      max_tokens: 50,
      stop: ['###'],
      user: 'end-user-7',
    });
    expect(c.object).toBe('text_completion');
    expect(c.model).toBe('claude-complete');
    expect(c.id).toMatch(/^cmpl-/);
    expect(c.choices[0]!.text).toBe('Simulated anthropic/claude-haiku-4-5 reply: hello claude');
    expect(lastSent('/messages').body).toMatchObject({
      model: 'claude-haiku-4-5',
      max_tokens: 50,
      stop_sequences: ['###'],
      messages: [{ role: 'user', content: 'hello claude' }],
      metadata: { user_id: 'end-user-7' },
    });
  });

  it('streams: text_completion chunks assemble the text, finish_reason, then the usage chunk asked for', async () => {
    env.sim.clearRequests();
    const { data: stream, response } = await sdk()
      .completions.create({
        model: 'complete',
        prompt: 'stream me',
        max_tokens: 64,
        stream: true,
        stream_options: { include_usage: true },
      })
      .withResponse();
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('x-service-workflow')).toBe('complete');
    expect(response.headers.get('x-service-used-provider')).toBe('oai');
    const chunks: Completion[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.length).toBeGreaterThan(3);
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    expect(chunks[0]!.id).toMatch(/^cmpl-/);
    for (const c of chunks) {
      expect(c.object).toBe('text_completion');
      expect(c.model).toBe('complete');
      expect(Number.isInteger(c.created)).toBe(true);
    }
    const text = chunks.map((c) => c.choices[0]?.text ?? '').join('');
    expect(text).toBe('Simulated openai/gpt-4o-mini reply: stream me');
    const finishes = chunks.flatMap((c) => c.choices.map((ch) => ch.finish_reason)).filter((f) => f !== null);
    expect(finishes).toEqual(['stop']);
    for (const c of chunks)
      for (const ch of c.choices) expect(ch).toMatchObject({ index: 0, logprobs: null });
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage!.completion_tokens).toBeGreaterThan(0);
    expect(last.usage!.total_tokens).toBe(last.usage!.prompt_tokens + last.usage!.completion_tokens);
    expect(chunks.slice(0, -1).every((c) => c.usage == null)).toBe(true);
    expect(lastSent('/completions').body).toMatchObject({
      prompt: 'stream me',
      stream: true,
      max_tokens: 64,
    });

    const entry = await logEntry('complete', response.headers.get('x-service-request-log-id')!);
    expect(entry).toMatchObject({ surface: 'compat', workflow: 'complete', stream: true, http_status: 200 });
    expect(entry.usage).toMatchObject({ completion_tokens: last.usage!.completion_tokens });
  });

  it('streams without include_usage: no usage chunk; on the wire data frames end with [DONE]', async () => {
    const stream = await sdk().completions.create({
      model: 'claude-complete',
      prompt: 'no usage',
      stream: true,
    });
    const chunks: Completion[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.every((c) => c.usage == null && c.choices.length === 1)).toBe(true);
    expect(chunks.map((c) => c.choices[0]!.text).join('')).toBe(
      'Simulated anthropic/claude-haiku-4-5 reply: no usage',
    );
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop');

    const res = await fetch(`${env.gw.url}${prefix}/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'complete', prompt: 'wire', stream: true }),
    });
    const frames = (await res.text()).split('\n\n').filter((f) => f.length > 0);
    expect(frames.every((f) => f.startsWith('data: '))).toBe(true);
    expect(frames.at(-1)).toBe('data: [DONE]');
  });

  describe('refusals, in OpenAI’s envelope', () => {
    it.each([
      ['token ids', [1, 2, 3]],
      ['token-id arrays', [[1, 2]]],
      ['several prompts', ['one', 'two']],
      ['an empty array', []],
    ])('prompt as %s', async (_, prompt) => {
      await expectSdkError(
        sdk().completions.create(params({ model: 'complete', prompt })),
        refusal('prompt'),
      );
      expectEnvelope(await raw('/completions', { model: 'complete', prompt }), refusal('prompt'));
    });

    it.each([
      ['n', { n: 2 }],
      ['best_of', { best_of: 3 }],
      ['suffix', { suffix: ' end' }],
      ['echo', { echo: true }],
      ['logprobs', { logprobs: 2 }],
      ['messages', { messages: [{ role: 'user', content: 'x' }] }],
      ['made_up', { made_up: 1 }],
      ['stream_options.other', { stream: true, stream_options: { other: true } }],
    ])('%s', async (param, extra) => {
      env.sim.clearRequests();
      const e = await expectSdkError(
        sdk().completions.create(params({ model: 'complete', prompt: 'x', ...extra })),
        refusal(param),
      );
      expect(e.message).toContain(param.split('.').at(-1));
      expect(env.sim.requests()).toEqual([]);
    });

    it('no prompt: invalid_request naming prompt', async () => {
      const want = { status: 400, type: 'invalid_request_error', code: 'invalid_request', param: 'prompt' };
      expectEnvelope(await raw('/completions', { model: 'complete' }), want);
    });

    it('a chat workflow: request_type_mismatch, this endpoint serves completion workflows', async () => {
      const want = {
        status: 400,
        type: 'invalid_request_error',
        code: 'request_type_mismatch',
        param: 'model',
      };
      const e = await expectSdkError(sdk().completions.create({ model: 'chat', prompt: 'x' }), want);
      expect(e.message).toContain('this endpoint serves completion workflows');
      expect(e.message).toContain('POST /v1/chat/completions');
    });

    it('a completion workflow on /chat/completions is told to use /v1/completions', async () => {
      const want = {
        status: 400,
        type: 'invalid_request_error',
        code: 'request_type_mismatch',
        param: 'model',
      };
      const e = await expectSdkError(
        sdk().chat.completions.create({ model: 'complete', messages: [{ role: 'user', content: 'x' }] }),
        want,
      );
      expect(e.message).toContain('POST /v1/completions');
    });

    it('the provider fails: 502 upstream_error, streamed or not', async () => {
      const want = { status: 502, type: 'api_error', code: 'upstream_error', param: null };
      await expectSdkError(sdk().completions.create({ model: 'complete-fail', prompt: 'x' }), want);
      await expectSdkError(
        sdk().completions.create({ model: 'complete-fail', prompt: 'x', stream: true }),
        want,
      );
      expectEnvelope(await raw('/completions', { model: 'complete-fail', prompt: 'x' }), want);
    });

    it('a stream cut after it started: the SDK iterator throws upstream_error, no [DONE] on the wire', async () => {
      const stream = await sdk().completions.create({
        model: 'complete-cut',
        prompt: 'this stream gets cut',
        stream: true,
      });
      const chunks: Completion[] = [];
      const err = await (async () => {
        for await (const chunk of stream) chunks.push(chunk);
      })().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(chunks.length, 'the stream had started').toBeGreaterThan(0);
      expect(err).toBeInstanceOf(OpenAI.APIError);
      expect((err as APIError).code).toBe('upstream_error');
      expect(chunks.some((c) => c.choices[0]?.finish_reason === 'stop')).toBe(false);

      const res = await fetch(`${env.gw.url}${prefix}/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'complete-cut', prompt: 'cut', stream: true }),
      });
      const text = await res.text();
      expect(text).not.toContain('[DONE]');
      const frames = text.split('\n\n').filter((f) => f.startsWith('data: '));
      const last = JSON.parse(frames.at(-1)!.slice(6)) as { error?: { code?: string; type?: string } };
      expect(last.error).toMatchObject({ code: 'upstream_error', type: 'api_error' });
    });
  });

  describe('embeddings, images and speech refuse parameters OpenAI does not take', () => {
    it.each([
      ['/embeddings', { model: 'embed', input: 'x', made_up: 1 }, 'made_up'],
      ['/embeddings', { model: 'embed', input: 'x', messages: [] }, 'messages'],
      ['/images/generations', { model: 'image', prompt: 'x', made_up: 'y' }, 'made_up'],
      ['/images/generations', { model: 'image', prompt: 'x', background: 'transparent' }, 'background'],
      ['/images/generations', { model: 'image', prompt: 'x', output_format: 'webp' }, 'output_format'],
      ['/images/generations', { model: 'image', prompt: 'x', stream: true }, 'stream'],
      ['/audio/speech', { model: 'audio', input: 'x', voice: 'alloy', made_up: true }, 'made_up'],
      [
        '/audio/speech',
        { model: 'audio', input: 'x', voice: 'alloy', instructions: 'whisper' },
        'instructions',
      ],
      [
        '/audio/speech',
        { model: 'audio', input: 'x', voice: 'alloy', stream_format: 'sse' },
        'stream_format',
      ],
    ])('%s with %j', async (path, body, param) => {
      env.sim.clearRequests();
      const message = expectEnvelope(await raw(path, body), refusal(param));
      expect(message).toContain(param);
      expect(env.sim.requests()).toEqual([]);
    });

    it('what the SDK sends by default still works, as do the values that ask for nothing', async () => {
      // No encoding_format: the SDK asks for base64 and decodes it.
      const e = await sdk().embeddings.create({ model: 'embed', input: 'default call', user: 'u-1' });
      expect(e.data[0]!.embedding.length).toBeGreaterThan(0);
      // OpenAI's embeddings and images APIs take the end-user id: it goes on.
      expect(lastSent('/embeddings').body).toMatchObject({ user: 'u-1' });
      const img = await sdk().images.generate({
        model: 'image',
        prompt: 'a lighthouse',
        user: 'u-1',
        background: 'auto',
        moderation: 'auto',
        stream: false,
        size: 'auto',
      });
      expect(img.data).toHaveLength(1);
      // `auto` leaves the size to the provider: none is sent.
      expect(lastSent('/images/generations').body).not.toHaveProperty('size');
      expect(lastSent('/images/generations').body).toMatchObject({ user: 'u-1' });
      const speech = await sdk().audio.speech.create({
        model: 'audio',
        input: 'hello',
        voice: 'alloy',
        stream_format: 'audio',
      });
      expect(speech.status).toBe(200);
      expect(Buffer.from(await speech.arrayBuffer()).length).toBeGreaterThan(0);
    });
  });
});
