/**
 * The error encoder (http/errors.ts) through a minimal Fastify app: every refusal in the shape of
 * the surface that was asked (native, OpenAI's for compat and Responses, Anthropic's for Messages),
 * with the status of its code; Fastify's own errors in the same vocabulary; the gateway's own
 * failures answered 503, never 5xx-as-500, and logged once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { workflowBudgetExceeded } from '#gateway/errors/budget';
import { type ErrorCode, GatewayError, STATUS_OF } from '#gateway/errors/index';
import { SURFACES, type TestApp, testApp } from './helpers.ts';

let t: TestApp;
/** What each route throws, by name. */
const THROWN: Record<string, () => unknown> = {
  param: () =>
    new GatewayError('invalid_request', 'temperature must be at most 2.', {
      param: 'temperature',
      hint: 'Send a number from 0 to 2.',
    }),
  'workflow-not-found': () =>
    new GatewayError('workflow_not_found', 'Workflow "x" does not exist in this project.'),
  'rate-limited': () =>
    new GatewayError('rate_limit_exceeded', 'Rate limit of 10 requests per minute for the project reached.', {
      retryAfterSeconds: 7,
      headers: { 'x-ratelimit-remaining-requests': '0' },
    }),
  budget: () =>
    workflowBudgetExceeded('support', [
      { provider: 'oai', model: 'gpt-4o-mini', status: 'skipped', reason: { message: 'capped' } },
    ]),
  bug: () => new TypeError("Cannot read properties of undefined (reading 'x')"),
  dependency: () => new Error('connect ECONNREFUSED 127.0.0.1:6379'),
  'not-an-error': () => 'a thrown string',
};

beforeAll(async () => {
  t = testApp({ bodyLimit: 64, maxParamLength: 40 });
  for (const surface of SURFACES) {
    t.app.post(`/${surface}/throw/:kind`, { config: { surface } }, async (req) => {
      throw THROWN[(req.params as { kind: string }).kind]!();
    });
    t.app.post(`/${surface}/code/:code`, { config: { surface } }, async (req) => {
      const code = (req.params as { code: ErrorCode }).code;
      throw new GatewayError(code, `refused with ${code}`);
    });
    t.app.post(`/${surface}/echo/:name`, { config: { surface } }, async (req) => req.body);
  }
  await t.app.ready();
});
afterAll(() => t?.app.close());

const post = (url: string, payload: string | object = {}, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: 'POST',
    url,
    payload,
    headers: { 'content-type': 'application/json', ...headers },
  });

describe('a refusal in each surface’s shape', () => {
  const bodies = {
    native: {
      error: 'invalid_request',
      message: 'temperature must be at most 2.',
      hint: 'Send a number from 0 to 2.',
      param: 'temperature',
    },
    compat: {
      error: {
        message: 'temperature must be at most 2. Send a number from 0 to 2.',
        type: 'invalid_request_error',
        param: 'temperature',
        code: 'invalid_request',
      },
    },
    messages: {
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message: 'temperature must be at most 2. Send a number from 0 to 2.',
        code: 'invalid_request',
        param: 'temperature',
      },
    },
  };
  it.each(SURFACES)('%s', async (surface) => {
    const r = await post(`/${surface}/throw/param`);
    expect(r.statusCode).toBe(400);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(r.json()).toEqual(surface === 'responses' ? bodies.compat : bodies[surface]);
    expect(r.headers['x-test-refusal']).toBe('invalid_request');
  });

  it('workflow_not_found on the OpenAI surfaces is model_not_found on `model`, as OpenAI SDKs expect', async () => {
    for (const surface of ['compat', 'responses']) {
      const r = await post(`/${surface}/throw/workflow-not-found`);
      expect(r.statusCode).toBe(404);
      expect(r.json()).toEqual({
        error: {
          message: 'Workflow "x" does not exist in this project.',
          type: 'invalid_request_error',
          param: 'model',
          code: 'model_not_found',
        },
      });
    }
    expect((await post('/native/throw/workflow-not-found')).json()).toEqual({
      error: 'workflow_not_found',
      message: 'Workflow "x" does not exist in this project.',
    });
  });

  it('a refusal’s Retry-After and headers go out with it, on every surface', async () => {
    for (const surface of SURFACES) {
      const r = await post(`/${surface}/throw/rate-limited`);
      expect(r.statusCode).toBe(429);
      expect(r.headers['retry-after']).toBe('7');
      expect(r.headers['x-ratelimit-remaining-requests']).toBe('0');
    }
    expect((await post('/messages/throw/rate-limited')).json()).toMatchObject({
      error: { type: 'rate_limit_error', code: 'rate_limit_exceeded' },
    });
  });

  it('budget refusals carry their fields on every surface, with the budget type', async () => {
    const attempts = [
      { provider: 'oai', model: 'gpt-4o-mini', status: 'skipped', reason: { message: 'capped' } },
    ];
    const message = 'Every model of workflow "support" is over its spend cap; no provider was called.';
    const fields = { scope: 'workflow', workflow: 'support', attempts };
    expect((await post('/native/throw/budget')).json()).toEqual({
      error: 'workflow_budget_exceeded',
      message,
      type: 'budget_exceeded',
      ...fields,
    });
    const compat = await post('/compat/throw/budget');
    expect(compat.statusCode).toBe(402);
    expect(compat.json()).toEqual({
      error: { message, type: 'budget_exceeded', param: null, code: 'workflow_budget_exceeded', ...fields },
    });
    expect((await post('/messages/throw/budget')).json()).toEqual({
      type: 'error',
      error: { type: 'budget_exceeded', message, code: 'workflow_budget_exceeded', ...fields },
    });
  });
});

describe('every code: its status, its OpenAI type and its Anthropic type', () => {
  // [status, compatible `type`, Messages `type`]
  const table: Record<ErrorCode, [number, string, string]> = {
    missing_api_key: [401, 'authentication_error', 'authentication_error'],
    invalid_api_key: [401, 'authentication_error', 'authentication_error'],
    insufficient_permission: [403, 'permission_error', 'permission_error'],
    invalid_request: [400, 'invalid_request_error', 'invalid_request_error'],
    invalid_json: [400, 'invalid_request_error', 'invalid_request_error'],
    request_type_mismatch: [400, 'invalid_request_error', 'invalid_request_error'],
    unsupported_parameter: [400, 'invalid_request_error', 'invalid_request_error'],
    workflow_not_found: [404, 'invalid_request_error', 'not_found_error'],
    model_not_supported: [400, 'invalid_request_error', 'invalid_request_error'],
    feature_disabled: [503, 'invalid_request_error', 'overloaded_error'],
    rate_limit_exceeded: [429, 'rate_limit_error', 'rate_limit_error'],
    session_not_found: [422, 'invalid_request_error', 'invalid_request_error'],
    response_not_found: [404, 'invalid_request_error', 'not_found_error'],
    conversation_not_found: [404, 'invalid_request_error', 'not_found_error'],
    conversation_locked: [409, 'invalid_request_error', 'invalid_request_error'],
    payload_too_large: [413, 'invalid_request_error', 'request_too_large'],
    unsupported_media_type: [415, 'invalid_request_error', 'invalid_request_error'],
    not_found: [404, 'invalid_request_error', 'not_found_error'],
    conflict: [409, 'invalid_request_error', 'invalid_request_error'],
    callback_conflict: [409, 'invalid_request_error', 'invalid_request_error'],
    callback_window_closed: [410, 'invalid_request_error', 'invalid_request_error'],
    invalid_workflow: [422, 'invalid_request_error', 'invalid_request_error'],
    request_timeout: [408, 'invalid_request_error', 'invalid_request_error'],
    uri_too_long: [414, 'invalid_request_error', 'invalid_request_error'],
    headers_too_large: [431, 'invalid_request_error', 'invalid_request_error'],
    upstream_error: [502, 'api_error', 'api_error'],
    service_unavailable: [503, 'api_error', 'overloaded_error'],
    workflow_budget_exceeded: [402, 'budget_exceeded', 'invalid_request_error'],
    project_budget_exceeded: [402, 'budget_exceeded', 'invalid_request_error'],
    workflow_budget_config_error: [422, 'budget_config_error', 'invalid_request_error'],
    project_budget_config_error: [422, 'budget_config_error', 'invalid_request_error'],
    guardrail_blocked: [400, 'invalid_request_error', 'invalid_request_error'],
  };

  it('the table covers every code', () => {
    expect(Object.keys(table).sort()).toEqual(Object.keys(STATUS_OF).sort());
  });

  it.each(Object.entries(table))('%s → %j', async (code, [status, compatType, messagesType]) => {
    const native = await post(`/native/code/${code}`);
    expect(native.statusCode).toBe(status);
    expect(native.json()).toEqual({ error: code, message: `refused with ${code}` });
    const compat = await post(`/compat/code/${code}`);
    expect(compat.statusCode).toBe(status);
    expect(compat.json().error).toMatchObject({ type: compatType, message: `refused with ${code}` });
    const messages = await post(`/messages/code/${code}`);
    expect(messages.statusCode).toBe(status);
    expect(messages.json()).toEqual({
      type: 'error',
      error: { type: messagesType, message: `refused with ${code}`, code },
    });
  });
});

describe('the gateway’s own failures: 503 service_unavailable, logged once with the request id', () => {
  it('a bug (TypeError): 503, no Retry-After (the same request fails the same way), the id in the hint', async () => {
    const before = t.logs.length;
    const r = await post('/native/throw/bug');
    expect(r.statusCode).toBe(503);
    expect(r.headers['retry-after']).toBeUndefined();
    const id = r.headers['x-test-request-id'];
    expect(r.headers['x-test-refusal']).toBe('service_unavailable');
    expect(r.json()).toEqual({
      error: 'service_unavailable',
      message: 'Internal error: the gateway failed to handle this request.',
      hint: `It is logged with request id ${id}.`,
    });
    const lines = t.logs.slice(before).filter((l) => l.msg === 'internal error');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 50, request_log_id: id, err: { type: 'TypeError' } });
  });

  it('a failing dependency, or a thrown non-Error: 503 with Retry-After 1, in the surface’s shape', async () => {
    for (const kind of ['dependency', 'not-an-error']) {
      const r = await post(`/compat/throw/${kind}`);
      expect(r.statusCode).toBe(503);
      expect(r.headers['retry-after']).toBe('1');
      expect(r.json()).toEqual({
        error: {
          message: expect.stringMatching(
            /^The gateway could not handle the request right now; retry shortly\. It is logged with request id req-\d+\.$/,
          ),
          type: 'api_error',
          param: null,
          code: 'service_unavailable',
        },
      });
    }
    const messages = await post('/messages/throw/dependency');
    expect(messages.json().error).toMatchObject({ type: 'overloaded_error', code: 'service_unavailable' });
  });
});

describe('Fastify’s own errors, in the vocabulary and shape of the surface', () => {
  const invalidJson = {
    error: 'invalid_json',
    message: 'The request body is not valid JSON.',
    hint: 'Send a JSON object body.',
  };

  it('a body that is not JSON, or an empty one: 400 invalid_json', async () => {
    for (const payload of ['{"a":', '']) {
      const r = await post('/native/echo/x', payload);
      expect(r.statusCode).toBe(400);
      expect(r.json()).toEqual(invalidJson);
    }
    const compat = await post('/compat/echo/x', '{"a":');
    expect(compat.statusCode).toBe(400);
    expect(compat.json()).toEqual({
      error: {
        message: 'The request body is not valid JSON. Send a JSON object body.',
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_json',
      },
    });
  });

  it('a body over the limit: 413 payload_too_large', async () => {
    const r = await post('/messages/echo/x', { text: 'x'.repeat(100) });
    expect(r.statusCode).toBe(413);
    expect(r.json()).toEqual({
      type: 'error',
      error: {
        type: 'request_too_large',
        message: 'The request body is too large.',
        code: 'payload_too_large',
      },
    });
  });

  it('a Content-Type the gateway does not read: 415 unsupported_media_type', async () => {
    const r = await post('/native/echo/x', '<a/>', { 'content-type': 'application/xml' });
    expect(r.statusCode).toBe(415);
    expect(r.json()).toEqual({
      error: 'unsupported_media_type',
      message: 'Unsupported Content-Type.',
      hint: 'Send Content-Type: application/json.',
    });
  });

  it('a path segment over the router’s limit: 414 uri_too_long', async () => {
    const r = await post(`/native/echo/${'w'.repeat(41)}`);
    expect(r.statusCode).toBe(414);
    expect(r.json()).toEqual({
      error: 'uri_too_long',
      message: 'A path segment of the URL is too long.',
      hint: 'Names in paths are at most a few hundred characters.',
    });
  });

  it('a path segment that is not well-formed percent-encoding: 400 invalid_request', async () => {
    const r = await post('/native/echo/%E0%A4%A');
    expect(r.statusCode).toBe(400);
    expect(r.json()).toEqual({
      error: 'invalid_request',
      message: 'The URL is not valid: a path segment is not well-formed percent-encoding.',
    });
  });
});

describe('a path no route serves is answered in the shape its SDK parses', () => {
  it.each([
    ['/v1/chat/unknown', 'compat'],
    ['/api/v1/files', 'compat'],
    ['/v1/responses/resp_1/cancel', 'compat'],
    ['/v1/messages/batches', 'messages'],
    ['/api/v1/messages', 'messages'],
    ['/v1/messagesx', 'native'],
    ['/v1/nothing', 'native'],
    ['/v1/chatbots', 'native'],
  ])('%s → %s', async (url, surface) => {
    const r = await t.app.inject({ method: 'GET', url });
    expect(r.statusCode).toBe(404);
    const message = `No route for GET ${url}.`;
    expect(r.json()).toEqual(
      surface === 'native'
        ? { error: 'not_found', message }
        : surface === 'compat'
          ? { error: { message, type: 'invalid_request_error', param: null, code: 'unknown_url' } }
          : { type: 'error', error: { type: 'not_found_error', message, code: 'not_found' } },
    );
  });
});
