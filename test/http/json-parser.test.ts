/**
 * The JSON body parsers (http/json-parser.ts) in a minimal Fastify app with the error encoder:
 * bodies nested past the limit are refused 400 before anything walks them, bad JSON is 400
 * invalid_json, prototype keys are refused, and JSON sent as a form or as text is read as JSON.
 * Every refusal is in the shape of the surface asked, never a 5xx.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SURFACES, type TestApp, testApp } from './helpers.ts';

const DEPTH = 8;
let t: TestApp;

beforeAll(async () => {
  t = testApp({ maxJsonDepth: DEPTH, bodyLimit: 4 * 1024 * 1024 });
  for (const surface of SURFACES)
    t.app.post(`/${surface}`, { config: { surface } }, async (req) => ({ got: req.body }));
  t.app.post('/optional', { config: { surface: 'compat', bodyOptional: true } }, async (req) => ({
    got: req.body ?? 'none',
  }));
  await t.app.ready();
});
afterAll(() => t?.app.close());

const send = (payload: string, surface: string = 'native', contentType = 'application/json') =>
  t.app.inject({ method: 'POST', url: `/${surface}`, payload, headers: { 'content-type': contentType } });

/** `{"a":{"a":...1}}` nested `n` objects deep. */
const nested = (n: number): string => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`;

const TOO_DEEP = `The request body nests objects and arrays more than ${DEPTH} levels deep.`;
const TOO_DEEP_HINT = `Send JSON nested at most ${DEPTH} levels deep.`;

describe('nesting depth', () => {
  it(`a body nested ${DEPTH} levels deep is read`, async () => {
    const r = await send(nested(DEPTH));
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({ got: JSON.parse(nested(DEPTH)) });
  });

  it(`one level more is refused 400 invalid_request, in each surface’s shape`, async () => {
    const bodies: Record<string, unknown> = {
      native: { error: 'invalid_request', message: TOO_DEEP, hint: TOO_DEEP_HINT },
      compat: {
        error: {
          message: `${TOO_DEEP} ${TOO_DEEP_HINT}`,
          type: 'invalid_request_error',
          param: null,
          code: 'invalid_request',
        },
      },
      messages: {
        type: 'error',
        error: {
          type: 'invalid_request_error',
          message: `${TOO_DEEP} ${TOO_DEEP_HINT}`,
          code: 'invalid_request',
        },
      },
    };
    for (const surface of SURFACES) {
      const r = await send(nested(DEPTH + 1), surface);
      expect(r.statusCode).toBe(400);
      expect(r.json()).toEqual(bodies[surface === 'responses' ? 'compat' : surface]);
    }
  });

  it('arrays count like objects', async () => {
    expect((await send(`{"a":${'['.repeat(DEPTH - 1)}${']'.repeat(DEPTH - 1)}}`)).statusCode).toBe(200);
    expect((await send(`{"a":${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}}`)).statusCode).toBe(400);
  });

  it('brackets inside strings, escaped quotes included, do not count', async () => {
    const text = `\\"${'[{'.repeat(50)}`;
    const r = await send(JSON.stringify({ text: JSON.parse(`"${text}"`) }));
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({ got: { text: `"${'[{'.repeat(50)}` } });
  });

  it('a body nested a million levels deep is refused 400 at once, not a stack overflow', async () => {
    const started = performance.now();
    const r = await send('['.repeat(1_000_000));
    expect(r.statusCode).toBe(400);
    expect(r.json()).toEqual({ error: 'invalid_request', message: TOO_DEEP, hint: TOO_DEEP_HINT });
    expect(performance.now() - started).toBeLessThan(1000);
  });
});

describe('a route whose body is optional', () => {
  it('an empty body labelled JSON is none; a body is still parsed and checked', async () => {
    const inject = (payload: string) =>
      t.app.inject({
        method: 'POST',
        url: '/optional',
        payload,
        headers: { 'content-type': 'application/json' },
      });
    expect((await inject('')).json()).toEqual({ got: 'none' });
    expect((await inject('{"since":1}')).json()).toEqual({ got: { since: 1 } });
    expect((await inject('{"a":')).statusCode).toBe(400);
    // Elsewhere an empty body is still invalid JSON.
    expect((await send('')).statusCode).toBe(400);
  });
});

describe('bad JSON', () => {
  const invalidJson = {
    error: 'invalid_json',
    message: 'The request body is not valid JSON.',
    hint: 'Send a JSON object body.',
  };

  it.each(['{"a":', '{a:1}', "{'a':1}", '{"a":1,}', 'NaN', '{"a":1}{"b":2}'])(
    '%s is refused 400 invalid_json',
    async (payload) => {
      const r = await send(payload);
      expect(r.statusCode).toBe(400);
      expect(r.json()).toEqual(invalidJson);
    },
  );

  it('on the Messages surface, in Anthropic’s shape', async () => {
    const r = await send('{"model":', 'messages');
    expect(r.statusCode).toBe(400);
    expect(r.json()).toEqual({
      type: 'error',
      error: {
        type: 'invalid_request_error',
        message: 'The request body is not valid JSON. Send a JSON object body.',
        code: 'invalid_json',
      },
    });
  });

  it.each(['{"__proto__":{"admin":true}}', '{"a":{"constructor":{"prototype":{"admin":true}}}}'])(
    'a prototype-polluting key is refused 400: %s',
    async (payload) => {
      const r = await send(payload);
      expect(r.statusCode).toBe(400);
      expect(r.json()).toEqual(invalidJson);
      expect(({} as Record<string, unknown>).admin).toBeUndefined();
    },
  );
});

describe('JSON under other labels', () => {
  it.each(['application/x-www-form-urlencoded', 'text/plain', 'text/plain; charset=utf-8'])(
    'JSON sent as %s is read as JSON (curl -d labels JSON a form)',
    async (contentType) => {
      const r = await send('{"workflow":"support"}', 'native', contentType);
      expect(r.statusCode).toBe(200);
      expect(r.json()).toEqual({ got: { workflow: 'support' } });
    },
  );

  it('a real form body under the form label is 400 invalid_json, not a 5xx', async () => {
    const r = await send('workflow=support&x=1', 'compat', 'application/x-www-form-urlencoded');
    expect(r.statusCode).toBe(400);
    expect(r.json()).toMatchObject({ error: { code: 'invalid_json', type: 'invalid_request_error' } });
  });

  it('the depth limit holds under those labels too', async () => {
    const r = await send(nested(DEPTH + 1), 'native', 'text/plain');
    expect(r.statusCode).toBe(400);
    expect(r.json()).toEqual({ error: 'invalid_request', message: TOO_DEEP, hint: TOO_DEEP_HINT });
  });
});
