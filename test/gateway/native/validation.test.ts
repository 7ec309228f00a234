/** Every native validation error: exact status, `{error, message, hint?}`, no upstream call, never a 5xx. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { API_KEY, workflow } from '../../harness/manifests.ts';
import { type Env, type ErrBody, post, type Reply, startEnv, userMsg } from './helpers.ts';

let env: Env;
beforeAll(async () => {
  const wf = (name: string, requestType: string, extra: Record<string, unknown> = {}) =>
    workflow(name, { provider: 'oai', model: 'gpt-4o-mini', requestType, ...extra });
  env = await startEnv(() => [
    wf('chat-wf', 'chat'),
    wf('completion-wf', 'completion'),
    wf('image-wf', 'image'),
    wf('embed-wf', 'embedding'),
    wf('audio-wf', 'audio'),
    wf('vision-wf', 'vision'),
    wf('pipeline-wf', 'chat', { eventName: 'order.created' }),
  ]);
});
afterAll(async () => env?.close());
beforeEach(() => env.sim.clearRequests());

/** Asserts a native error body with this status and code, and that no provider was called. */
function expectError(r: Reply<ErrBody>, status: number, code: string): void {
  expect(r.status, r.text).toBe(status);
  expect(r.json.error).toBe(code);
  expect(typeof r.json.message).toBe('string');
  expect(r.json.message.length).toBeGreaterThan(0);
  if (r.json.hint !== undefined) expect(typeof r.json.hint).toBe('string');
  const extra = Object.keys(r.json).filter((k) => !['error', 'message', 'hint', 'param'].includes(k));
  expect(extra).toEqual([]);
  expect(env.sim.requests()).toHaveLength(0);
}

const send = (body: unknown) => post<ErrBody>(env.gw.url, body);
const chat = (extra: Record<string, unknown>) => send({ workflow: 'chat-wf', messages: userMsg(), ...extra });

describe('body parsing', () => {
  it('a body that is not JSON → 400 invalid_json', async () => {
    expectError(
      await post<ErrBody>(env.gw.url, null, { raw: '{"workflow": "chat-wf",' }),
      400,
      'invalid_json',
    );
  });

  it('an empty JSON body → 400', async () => {
    const r = await post<ErrBody>(env.gw.url, null, { raw: '' });
    expect(r.status).toBe(400);
    expect(['invalid_json', 'invalid_request']).toContain(r.json.error);
  });

  it.each([
    ['an array', '[{"workflow":"chat-wf"}]'],
    ['a string', '"chat-wf"'],
    ['a number', '42'],
    ['null', 'null'],
    ['true', 'true'],
  ])('a body that is %s, not an object → 400 invalid_request', async (_what, raw) => {
    const r = await post<ErrBody>(env.gw.url, null, { raw });
    expectError(r, 400, 'invalid_request');
    expect(r.json.message).toMatch(/object/);
  });

  it.each([
    [
      '__proto__',
      '{"workflow":"chat-wf","messages":[{"role":"user","content":"x"}],"__proto__":{"polluted":true}}',
    ],
    [
      'constructor.prototype',
      '{"workflow":"chat-wf","messages":[{"role":"user","content":"x"}],"constructor":{"prototype":{"polluted":true}}}',
    ],
  ])('a body carrying a %s key is refused with 400 invalid_json, nothing polluted', async (_what, raw) => {
    const r = await post<ErrBody>(env.gw.url, null, { raw });
    expectError(r, 400, 'invalid_json');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('a content type without a parser → 415 unsupported_media_type', async () => {
    const r = await post<ErrBody>(env.gw.url, null, { raw: '<a/>', contentType: 'application/xml' });
    expectError(r, 415, 'unsupported_media_type');
  });

  it('a multipart body anywhere but a transcription upload → 415 unsupported_media_type', async () => {
    const form = new FormData();
    form.append('workflow', 'chat-wf');
    form.append('file', new Blob(['not audio']), 'a.mp3');
    const res = await fetch(`${env.gw.url}/v1/ai`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}` },
      body: form,
    });
    const text = await res.text();
    expectError(
      { status: res.status, text, json: JSON.parse(text) as ErrBody } as Reply<ErrBody>,
      415,
      'unsupported_media_type',
    );
  });

  it.each(['text/plain', 'application/x-www-form-urlencoded'])(
    'a JSON body labelled %s (curl -d sends the form label) is read as JSON',
    async (contentType) => {
      const r = await post<{ object: string }>(env.gw.url, null, {
        raw: JSON.stringify({ workflow: 'chat-wf', messages: userMsg() }),
        contentType,
      });
      expect(r.status).toBe(200);
      expect(r.json.object).toBe('chat.completion');
    },
  );

  it.each(['text/plain', 'application/x-www-form-urlencoded'])(
    'a body labelled %s that is not JSON → 400 invalid_json',
    async (contentType) => {
      const r = await post<ErrBody>(env.gw.url, null, { raw: 'workflow=chat-wf', contentType });
      expectError(r, 400, 'invalid_json');
    },
  );

  it('a body over the native limit → 413 payload_too_large', async () => {
    const big = 'a'.repeat(37 * 1024 * 1024);
    const r = await post<ErrBody>(env.gw.url, { workflow: 'chat-wf', messages: userMsg(big) });
    expectError(r, 413, 'payload_too_large');
  });
});

describe('field validation', () => {
  it.each([-0.1, 2.1])('temperature %s → 400 naming temperature', async (temperature) => {
    const r = await chat({ temperature });
    expectError(r, 400, 'invalid_request');
    expect(r.json.message).toMatch(/temperature/);
    expect(r.json.param).toBe('temperature');
  });

  it('temperature at the bounds 0 and 2 is accepted', async () => {
    expect((await chat({ temperature: 0 })).status).toBe(200);
    expect((await chat({ temperature: 2 })).status).toBe(200);
  });

  it('temperature of the wrong type → 400', async () => {
    const r = await chat({ temperature: '0.5' });
    expectError(r, 400, 'invalid_request');
    expect(r.json.message).toMatch(/temperature/);
  });

  it('a bad role → 400 naming the role field', async () => {
    const r = await send({ workflow: 'chat-wf', messages: [{ role: 'wizard', content: 'hi' }] });
    expectError(r, 400, 'invalid_request');
    expect(r.json.message).toMatch(/role/);
    expect(r.json.param).toBe('messages[0].role');
  });

  it('empty messages → 400', async () => {
    const r = await send({ workflow: 'chat-wf', messages: [] });
    expectError(r, 400, 'invalid_request');
    expect(r.json.message).toMatch(/messages/);
  });

  it('messages that is not an array → 400', async () => {
    const r = await send({ workflow: 'chat-wf', messages: 'hello' });
    expectError(r, 400, 'invalid_request');
    expect(r.json.param).toBe('messages');
  });

  it('a message without content → 400', async () => {
    const r = await send({ workflow: 'chat-wf', messages: [{ role: 'user' }] });
    expectError(r, 400, 'invalid_request');
    expect(r.json.message).toMatch(/content/);
  });

  it('max_tokens that is not a positive integer → 400', async () => {
    for (const max_tokens of [0, -1, 1.5, 'ten']) {
      env.sim.clearRequests();
      const r = await chat({ max_tokens });
      expectError(r, 400, 'invalid_request');
      expect(r.json.message).toMatch(/max_tokens/);
    }
  });

  it('top_p outside 0..1 → 400', async () => {
    expectError(await chat({ top_p: 1.5 }), 400, 'invalid_request');
  });

  it('an unknown format → 400 naming format', async () => {
    const r = await chat({ format: 'xml' });
    expectError(r, 400, 'invalid_request');
    expect(r.json.message).toMatch(/format/);
  });

  it('stream that is not a boolean → 400', async () => {
    expectError(await chat({ stream: 'yes' }), 400, 'invalid_request');
  });

  it('workflow of the wrong type → 400', async () => {
    const r = await send({ workflow: 42, messages: userMsg() });
    expectError(r, 400, 'invalid_request');
    expect(r.json.param).toBe('workflow');
  });

  it('a malformed image part → 400', async () => {
    const r = await send({
      workflow: 'vision-wf',
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x/y.png' } }] }],
    });
    expectError(r, 400, 'invalid_request');
  });

  it.each([
    ['n: 0', { n: 0 }, /n/],
    ['n: 11 (over the limit)', { n: 11 }, /n/],
    ['n: 1.5', { n: 1.5 }, /n/],
    ['n: "2"', { n: '2' }, /n/],
    ['size: "big"', { size: 'big' }, /size/],
    ['size: "1024"', { size: '1024' }, /size/],
    ['size: 1024', { size: 1024 }, /size/],
  ])('image with %s → 400', async (_what, extra, re) => {
    const r = await send({ workflow: 'image-wf', prompt: 'a red fox', ...extra });
    expectError(r, 400, 'invalid_request');
    expect(r.json.message).toMatch(re);
    expect(r.json.param).toBe(Object.keys(extra)[0]);
  });

  it('a session_id that is not a UUID → 400', async () => {
    const r = await chat({ session_id: 'not-a-uuid' });
    expectError(r, 400, 'invalid_request');
    expect(r.json.param).toBe('session_id');
  });

  // Unknown sessions of session-memory workflows (422 session_not_found): test/sessions.
  it('a session_id for a workflow without session memory → 400', async () => {
    const r = await chat({ session_id: '3f2b8c1e-9d4a-4f6b-8e2c-1a2b3c4d5e6f' });
    expectError(r, 400, 'invalid_request');
    expect(r.json.param).toBe('session_id');
    expect(r.json.message).toMatch(/has no session memory/);
  });
});

describe('request type must match the workflow', () => {
  it('image workflow sent messages → 400 request_type_mismatch: the type requires prompt', async () => {
    const r = await send({ workflow: 'image-wf', messages: userMsg('draw a fox') });
    expectError(r, 400, 'request_type_mismatch');
    expect(r.json.message).toMatch(/image/);
    expect(r.json.message).toMatch(/requires `?prompt/);
    expect(typeof r.json.hint).toBe('string');
  });

  it('embedding workflow without input → 400 request_type_mismatch (requires input)', async () => {
    const r = await send({ workflow: 'embed-wf', messages: userMsg() });
    expectError(r, 400, 'request_type_mismatch');
    expect(r.json.message).toMatch(/requires `?input/);
    expect(typeof r.json.hint).toBe('string');
  });

  it('completion workflow sent messages → 400 request_type_mismatch (requires prompt)', async () => {
    const r = await send({ workflow: 'completion-wf', messages: userMsg() });
    expectError(r, 400, 'request_type_mismatch');
    expect(r.json.message).toMatch(/requires `?prompt/);
    expect(typeof r.json.hint).toBe('string');
  });

  it('chat workflow sent image parts → 400 request_type_mismatch', async () => {
    const r = await send({
      workflow: 'chat-wf',
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'what is this?' },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
          ],
        },
      ],
    });
    expectError(r, 400, 'request_type_mismatch');
    expect(r.json.message).toMatch(/chat/);
    expect(r.json.hint).toMatch(/vision/);
  });

  it('chat workflow sent a prompt instead of messages → 400 request_type_mismatch', async () => {
    const r = await send({ workflow: 'chat-wf', prompt: 'hello' });
    expectError(r, 400, 'request_type_mismatch');
    expect(r.json.message).toMatch(/messages/);
  });

  it('vision workflow without image parts → 400 request_type_mismatch', async () => {
    const r = await send({ workflow: 'vision-wf', messages: userMsg('no picture here') });
    expectError(r, 400, 'request_type_mismatch');
    expect(r.json.message).toMatch(/image_url/);
    expect(typeof r.json.hint).toBe('string');
  });

  it('audio workflow with neither file nor input → 400 request_type_mismatch', async () => {
    const r = await send({ workflow: 'audio-wf', messages: userMsg() });
    expectError(r, 400, 'request_type_mismatch');
    expect(r.json.message).toMatch(/file/);
    expect(r.json.message).toMatch(/input/);
  });

  it('audio file that is not base64 → 400 naming file', async () => {
    const r = await send({ workflow: 'audio-wf', file: '***not base64***' });
    expectError(r, 400, 'invalid_request');
    expect(r.json.param).toBe('file');
  });

  it('stream: true on an embedding workflow → 400 naming stream', async () => {
    const r = await send({ workflow: 'embed-wf', input: 'hello', stream: true });
    expectError(r, 400, 'invalid_request');
    expect(r.json.message).toMatch(/stream/);
    expect(r.json.param).toBe('stream');
  });

  it('stream: true on an image workflow → 400', async () => {
    expectError(await send({ workflow: 'image-wf', prompt: 'fox', stream: true }), 400, 'invalid_request');
  });
});

describe('structured output schemas', () => {
  it('a response_format schema that does not compile → 400 naming response_format', async () => {
    const r = await chat({
      response_format: { type: 'object', properties: { a: { type: 'no-such-type' } } },
    });
    expectError(r, 400, 'invalid_request');
    expect(r.json.param).toBe('response_format');
  });

  it('{type: json_schema} without a schema → 400', async () => {
    const r = await chat({ response_format: { type: 'json_schema', json_schema: { name: 'x' } } });
    expectError(r, 400, 'invalid_request');
    expect(r.json.param).toBe('response_format');
  });

  it('an object response_format that is no schema → 400', async () => {
    const r = await chat({ response_format: { foo: 'bar' } });
    expectError(r, 400, 'invalid_request');
    expect(r.json.param).toBe('response_format');
  });

  it('a structured_output_schema that does not compile → 400', async () => {
    const r = await send({
      provider: 'oai',
      model: 'gpt-4o-mini',
      messages: userMsg(),
      structured_output_schema: { type: 'object', required: 'name' },
    });
    expectError(r, 400, 'invalid_request');
  });
});

describe('backend-pipeline workflows', () => {
  it('a workflow with eventName on the sync endpoint → 400 model_not_supported with a hint', async () => {
    const r = await send({ workflow: 'pipeline-wf', messages: userMsg() });
    expectError(r, 400, 'model_not_supported');
    expect(r.json.hint).toMatch(/async/);
  });

  it('the same with stream: true → 400 model_not_supported', async () => {
    expectError(
      await send({ workflow: 'pipeline-wf', messages: userMsg(), stream: true }),
      400,
      'model_not_supported',
    );
  });
});
