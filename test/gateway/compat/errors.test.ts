/**
 * The compatible error table, row by row, as the official SDK sees it: the matching error class,
 * the HTTP status, and `error.type` / `error.code` / `error.param` of the OpenAI envelope (checked
 * on the raw body as well, so the envelope is exactly `{error: {message, type, param, code}}`).
 *
 * Not covered here (not implemented by the gateway yet): 429 rate_limit_exceeded, 402/422 budget rows.
 */
import { randomUUID } from 'node:crypto';
import OpenAI, { type APIError } from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsNonStreaming,
} from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NO_AI_SCOPE_KEY, OTHER_KEY } from '../../harness/manifests.ts';
import {
  API_KEY,
  CLOSED_KEY,
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

type ErrorClass = abstract new (...args: never[]) => APIError;

type Expected = ErrorWant;

/** The SDK call must reject with `cls`, carrying the expected status and envelope fields. */
async function expectSdkError(call: Promise<unknown>, cls: ErrorClass, want: Expected): Promise<APIError> {
  const err = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err, 'the SDK call must throw').toBeInstanceOf(cls);
  const e = err as APIError;
  expect(e.status).toBe(want.status);
  expect(e.type).toBe(want.type);
  expect(e.code).toBe(want.code);
  expect(e.param ?? null).toBe(want.param);
  expect(typeof (e.error as { message?: unknown }).message).toBe('string');
  return e;
}

const user = [{ role: 'user' as const, content: 'hello' }];
/** What every compatible endpoint answers when the Project's compatibleApi.enabled is false. */
const SWITCHED_OFF =
  'The compatible APIs (OpenAI and Anthropic) are disabled for this project. Set spec.compatibleApi.enabled: true on the Project.';
/** For parameters the SDK's types no longer (or never) describe. */
const params = (p: Record<string, unknown>) => p as unknown as ChatCompletionCreateParamsNonStreaming;

describe.each(['/v1', '/api/v1'] as const)('compatible error table under %s', (prefix) => {
  const sdk = (key?: string) => env.client({ prefix, ...(key ? { key } : {}) });
  const chatRaw = (body: unknown, key?: string | null) =>
    rawJson(env.gw.url, `${prefix}/chat/completions`, { body, ...(key !== undefined ? { key } : {}) });

  describe('400 invalid_request_error', () => {
    it('missing model', async () => {
      const want = { status: 400, type: 'invalid_request_error', code: 'invalid_request', param: 'model' };
      await expectSdkError(
        sdk().chat.completions.create(params({ messages: user })),
        OpenAI.BadRequestError,
        want,
      );
      expectEnvelope(await chatRaw({ messages: user }), want);
    });

    it('missing messages', async () => {
      const want = { status: 400, type: 'invalid_request_error', code: 'invalid_request', param: 'messages' };
      await expectSdkError(
        sdk().chat.completions.create(params({ model: 'chat' })),
        OpenAI.BadRequestError,
        want,
      );
      expectEnvelope(await chatRaw({ model: 'chat' }), want);
    });

    it('empty messages', async () => {
      await expectSdkError(
        sdk().chat.completions.create({ model: 'chat', messages: [] }),
        OpenAI.BadRequestError,
        { status: 400, type: 'invalid_request_error', code: 'invalid_request', param: 'messages' },
      );
    });

    it.each([2.5, -0.1, 100])('temperature %s is out of range (0 to 2)', async (temperature) => {
      const want = {
        status: 400,
        type: 'invalid_request_error',
        code: 'invalid_request',
        param: 'temperature',
      };
      await expectSdkError(
        sdk().chat.completions.create({ model: 'chat', messages: user, temperature }),
        OpenAI.BadRequestError,
        want,
      );
      expectEnvelope(await chatRaw({ model: 'chat', messages: user, temperature }), want);
    });

    it('temperature 0 and 2 are accepted', async () => {
      for (const temperature of [0, 2]) {
        const c = await sdk().chat.completions.create({ model: 'chat', messages: user, temperature });
        expect(c.object).toBe('chat.completion');
      }
    });

    it('a body that is not JSON', async () => {
      const res = await fetch(`${env.gw.url}${prefix}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
        body: '{"model": "chat", ',
      });
      expectEnvelope(
        { status: res.status, json: await res.json() },
        { status: 400, type: 'invalid_request_error', code: 'invalid_json', param: null },
      );
    });

    it('a workflow of another request type (the wrong endpoint for that model)', async () => {
      const want = {
        status: 400,
        type: 'invalid_request_error',
        code: 'request_type_mismatch',
        param: 'model',
      };
      await expectSdkError(
        sdk().chat.completions.create({ model: 'embed', messages: user }),
        OpenAI.BadRequestError,
        want,
      );
      await expectSdkError(
        sdk().embeddings.create({ model: 'chat', input: 'x' }),
        OpenAI.BadRequestError,
        want,
      );
      await expectSdkError(
        sdk().images.generate({ model: 'embed', prompt: 'x' }),
        OpenAI.BadRequestError,
        want,
      );
      await expectSdkError(
        sdk().audio.speech.create({ model: 'image', input: 'x', voice: 'alloy' }),
        OpenAI.BadRequestError,
        want,
      );
      await expectSdkError(
        sdk().completions.create({ model: 'chat', prompt: 'x' }),
        OpenAI.BadRequestError,
        want,
      );
      await expectSdkError(
        sdk().chat.completions.create({ model: 'complete', messages: user }),
        OpenAI.BadRequestError,
        want,
      );
    });
  });

  describe('400 unsupported_parameter', () => {
    const cases: [string, Record<string, unknown>][] = [
      ['functions', { functions: [{ name: 'f', parameters: { type: 'object', properties: {} } }] }],
      ['function_call', { function_call: 'auto' }],
      ['logprobs', { logprobs: true }],
      ['top_logprobs', { top_logprobs: 2 }],
      ['n', { n: 2 }],
    ];
    it.each(cases)('%s', async (name, extra) => {
      const want = { status: 400, type: 'invalid_request_error', code: 'unsupported_parameter', param: name };
      const e = await expectSdkError(
        sdk().chat.completions.create(params({ model: 'chat', messages: user, ...extra })),
        OpenAI.BadRequestError,
        want,
      );
      expect(e.message).toContain(name);
      expectEnvelope(await chatRaw({ model: 'chat', messages: user, ...extra }), want);
    });

    it('also refused on a stream request (before any SSE is sent)', async () => {
      await expectSdkError(
        sdk().chat.completions.create({ model: 'chat', messages: user, n: 3, stream: true }),
        OpenAI.BadRequestError,
        { status: 400, type: 'invalid_request_error', code: 'unsupported_parameter', param: 'n' },
      );
    });

    it('n: 1 and logprobs: false are fine', async () => {
      const c = await sdk().chat.completions.create({ model: 'chat', messages: user, n: 1, logprobs: false });
      expect(c.choices).toHaveLength(1);
    });
  });

  describe('401 authentication_error invalid_api_key', () => {
    const want = { status: 401, type: 'authentication_error', code: 'invalid_api_key', param: null };

    it('an unknown key', async () => {
      await expectSdkError(
        sdk('sy_live_ThisKeyDoesNotExist0123456789abcdef').chat.completions.create({
          model: 'chat',
          messages: user,
        }),
        OpenAI.AuthenticationError,
        want,
      );
    });

    it('a malformed key', async () => {
      await expectSdkError(sdk('sk-not-a-switchyard-key').models.list(), OpenAI.AuthenticationError, want);
    });

    it('no Authorization header at all', async () => {
      expectEnvelope(await chatRaw({ model: 'chat', messages: user }, null), want);
      expectEnvelope(await rawJson(env.gw.url, `${prefix}/models`, { key: null }), want);
    });

    it('a non-Bearer scheme', async () => {
      const res = await fetch(`${env.gw.url}${prefix}/models`, {
        headers: { authorization: `Basic ${API_KEY}` },
      });
      expectEnvelope({ status: res.status, json: await res.json() }, want);
    });
  });

  describe('403 permission_error insufficient_permission', () => {
    it('a key without the ai scope', async () => {
      const want = { status: 403, type: 'permission_error', code: 'insufficient_permission', param: null };
      await expectSdkError(
        sdk(NO_AI_SCOPE_KEY).chat.completions.create({ model: 'chat', messages: user }),
        OpenAI.PermissionDeniedError,
        want,
      );
      await expectSdkError(sdk(NO_AI_SCOPE_KEY).models.list(), OpenAI.PermissionDeniedError, want);
      expectEnvelope(await chatRaw({ model: 'chat', messages: user }, NO_AI_SCOPE_KEY), want);
    });
  });

  describe('404 model_not_found, param model', () => {
    const want = { status: 404, type: 'invalid_request_error', code: 'model_not_found', param: 'model' };

    it('a workflow that does not exist', async () => {
      await expectSdkError(
        sdk().chat.completions.create({ model: 'nope', messages: user }),
        OpenAI.NotFoundError,
        want,
      );
      expectEnvelope(await chatRaw({ model: 'nope', messages: user }), want);
    });

    it('names are case-sensitive', async () => {
      await expectSdkError(
        sdk().chat.completions.create({ model: 'Chat', messages: user }),
        OpenAI.NotFoundError,
        want,
      );
    });

    it("another project's workflow does not exist for this key", async () => {
      await expectSdkError(
        sdk(OTHER_KEY).chat.completions.create({ model: 'chat', messages: user }),
        OpenAI.NotFoundError,
        want,
      );
    });

    it('on the other endpoints too', async () => {
      await expectSdkError(
        sdk().embeddings.create({ model: 'nope', input: 'x' }),
        OpenAI.NotFoundError,
        want,
      );
      await expectSdkError(sdk().images.generate({ model: 'nope', prompt: 'x' }), OpenAI.NotFoundError, want);
    });
  });

  describe('400 model_not_supported', () => {
    it('a workflow with an event name', async () => {
      const want = {
        status: 400,
        type: 'invalid_request_error',
        code: 'model_not_supported',
        param: 'model',
      };
      const e = await expectSdkError(
        sdk().chat.completions.create({ model: 'order-pipeline', messages: user }),
        OpenAI.BadRequestError,
        want,
      );
      expect(e.message).toMatch(/async/);
      await expectSdkError(
        sdk().chat.completions.create({ model: 'order-pipeline', messages: user, stream: true }),
        OpenAI.BadRequestError,
        want,
      );
      expectEnvelope(await chatRaw({ model: 'order-pipeline', messages: user }), want);
      // No provider was called.
      expect(env.sim.requests().filter((r) => JSON.stringify(r.body).includes('order-pipeline'))).toEqual([]);
    });
  });

  // 422 session_not_found (unknown, malformed or foreign sessions of a session workflow): test/sessions.
  describe('400 session_id without session memory', () => {
    it('a session_id for a workflow without session memory', async () => {
      const want = {
        status: 400,
        type: 'invalid_request_error',
        code: 'invalid_request',
        param: 'session_id',
      };
      const session_id = randomUUID();
      await expectSdkError(
        sdk().chat.completions.create(params({ model: 'chat', messages: user, session_id })),
        OpenAI.BadRequestError,
        want,
      );
      expectEnvelope(await chatRaw({ model: 'chat', messages: user, session_id }), want);
    });
  });

  describe('502 upstream_error', () => {
    const want = { status: 502, type: 'api_error', code: 'upstream_error', param: null };

    it('every provider of the chain fails', async () => {
      env.sim.clearRequests();
      await expectSdkError(
        sdk().chat.completions.create({ model: 'all-fail', messages: user }),
        OpenAI.InternalServerError,
        want,
      );
      // Both slots were tried.
      const tried = env.sim.requests().map((r) => r.provider);
      expect(tried).toEqual(expect.arrayContaining(['openai', 'gemini']));
      expectEnvelope(await chatRaw({ model: 'all-fail', messages: user }), want);
    });

    it('every provider fails before a stream starts: an error status, not an SSE body', async () => {
      await expectSdkError(
        sdk().chat.completions.create({ model: 'all-fail', messages: user, stream: true }),
        OpenAI.InternalServerError,
        want,
      );
    });
  });

  describe('503 feature_disabled', () => {
    it('the Project has compatibleApi.enabled: false', async () => {
      const want = { status: 503, type: 'invalid_request_error', code: 'feature_disabled', param: null };
      await expectSdkError(
        sdk(CLOSED_KEY).chat.completions.create({ model: 'closed-chat', messages: user }),
        OpenAI.InternalServerError,
        want,
      );
      await expectSdkError(sdk(CLOSED_KEY).models.list(), OpenAI.InternalServerError, want);
      await expectSdkError(sdk(CLOSED_KEY).models.retrieve('closed-chat'), OpenAI.InternalServerError, want);
      await expectSdkError(
        sdk(CLOSED_KEY).embeddings.create({ model: 'closed-chat', input: 'x' }),
        OpenAI.InternalServerError,
        want,
      );
      const message = expectEnvelope(
        await chatRaw({ model: 'closed-chat', messages: user }, CLOSED_KEY),
        want,
      );
      expect(message).toBe(SWITCHED_OFF);
    });

    it('the Responses and Messages surfaces follow the same switch, with the same message', async () => {
      const want = { status: 503, type: 'invalid_request_error', code: 'feature_disabled', param: null };
      const responses = await rawJson(env.gw.url, `${prefix}/responses`, {
        body: { model: 'closed-chat', input: 'hello' },
        key: CLOSED_KEY,
      });
      expect(expectEnvelope(responses, want)).toBe(SWITCHED_OFF);
      const messages = await rawJson(env.gw.url, `${prefix}/messages`, {
        body: { model: 'closed-chat', max_tokens: 16, messages: user },
        key: CLOSED_KEY,
      });
      expect(messages.status).toBe(503);
      expect(messages.json).toEqual({
        type: 'error',
        error: { type: 'overloaded_error', message: SWITCHED_OFF, code: 'feature_disabled' },
      });
    });
  });

  describe('404 unknown_url for OpenAI endpoints the gateway does not serve', () => {
    it('moderations.create gets an OpenAI envelope the SDK can parse', async () => {
      await expectSdkError(sdk().moderations.create({ model: 'chat', input: 'x' }), OpenAI.NotFoundError, {
        status: 404,
        type: 'invalid_request_error',
        code: 'unknown_url',
        param: null,
      });
    });
  });

  describe('a stream whose provider fails after the first chunk', () => {
    it("makes the SDK's iterator throw instead of ending silently", async () => {
      const stream = await sdk().chat.completions.create({
        model: 'cut-stream',
        messages: [{ role: 'user', content: 'this stream gets cut' }],
        stream: true,
      });
      const chunks: ChatCompletionChunk[] = [];
      const err = await (async () => {
        for await (const chunk of stream) chunks.push(chunk);
      })().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(chunks.length, 'the stream had started').toBeGreaterThan(0);
      expect(err, 'the iterator must throw').toBeInstanceOf(OpenAI.APIError);
      const e = err as APIError;
      expect(e.code).toBe('upstream_error');
      expect(e.type).toBe('api_error');
      // Nothing claimed a normal end.
      expect(chunks.some((c) => c.choices[0]?.finish_reason === 'stop')).toBe(false);
    });

    it('on the wire: an error frame and no [DONE]', async () => {
      const res = await fetch(`${env.gw.url}${prefix}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'cut-stream', messages: user, stream: true }),
      });
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).not.toContain('[DONE]');
      const frames = text.split('\n\n').filter((f) => f.startsWith('data: '));
      const last = JSON.parse(frames.at(-1)!.slice(6)) as { error?: { code?: string } };
      expect(last.error?.code).toBe('upstream_error');
    });
  });
});
