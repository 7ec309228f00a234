/**
 * Test-mode workflows sample structured output from the schema, and the schema can come from the
 * request. Hostile sizes (minItems/minLength/minProperties of 1e9, nested minItems) must not stall
 * or exhaust the gateway: answers stay quick, never 5xx, and other requests keep being served.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { workflow } from '../../harness/manifests.ts';
import { type ChatCompletion, type Env, post, startEnv, userMsg, type Wrapped } from './helpers.ts';

let env: Env;
beforeAll(async () => {
  env = await startEnv(() => [workflow('tm', { provider: 'oai', model: 'gpt-4o-mini', testMode: true })]);
});
afterAll(async () => env?.close());
beforeEach(() => env.sim.clearRequests());

const HOSTILE: [string, Record<string, unknown>][] = [
  ['minItems 1e9', { type: 'array', minItems: 1e9, items: { type: 'string' } }],
  [
    'minLength 1e9',
    { type: 'object', properties: { s: { type: 'string', minLength: 1e9 } }, required: ['s'] },
  ],
  ['minProperties 1e9', { type: 'object', minProperties: 1e9, additionalProperties: { type: 'string' } }],
  [
    'nested minItems 1000^3',
    {
      type: 'array',
      minItems: 1000,
      items: {
        type: 'array',
        minItems: 1000,
        items: { type: 'array', minItems: 1000, items: { type: 'integer' } },
      },
    },
  ],
  ['many long strings', { type: 'array', minItems: 10000, items: { type: 'string', minLength: 100000 } }],
];

describe('test mode with request-supplied schemas', () => {
  it('a conforming sample for an ordinary schema, no provider called', async () => {
    const r = await post<Wrapped<{ n: number; tags: string[] }>>(env.gw.url, {
      workflow: 'tm',
      messages: userMsg(),
      format: 'wrapped',
      response_format: {
        type: 'object',
        properties: {
          n: { type: 'integer', minimum: 3 },
          tags: { type: 'array', minItems: 2, items: { type: 'string' } },
        },
        required: ['n', 'tags'],
      },
    });
    expect(r.status).toBe(200);
    expect(r.json.meta.status).toBe('success');
    expect(r.json.data.n).toBeGreaterThanOrEqual(3);
    expect(r.json.data.tags).toHaveLength(2);
    expect(env.sim.requests()).toHaveLength(0);
  });

  it.each(HOSTILE)('%s: answered within 3 s with HTTP 200, never a 5xx', async (_name, schema) => {
    const started = Date.now();
    const r = await post<Wrapped<unknown>>(env.gw.url, {
      workflow: 'tm',
      messages: userMsg(),
      format: 'wrapped',
      response_format: schema,
    });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(r.status).toBe(200);
    expect(['success', 'error']).toContain(r.json.meta.status);
    expect(r.text.length).toBeLessThan(20 * 1024 * 1024);
    const ok = await post<ChatCompletion>(env.gw.url, { workflow: 'tm', messages: userMsg() });
    expect(ok.status).toBe(200);
    expect(ok.json.object).toBe('chat.completion');
  });

  it('hostile tool parameter schemas are bounded too', async () => {
    const started = Date.now();
    const r = await post<Wrapped<unknown>>(env.gw.url, {
      workflow: 'tm',
      messages: userMsg(),
      format: 'wrapped',
      tools: [
        {
          type: 'function',
          function: {
            name: 'big',
            parameters: { type: 'object', properties: { a: { type: 'string', minLength: 1e9 } } },
          },
        },
      ],
      tool_choice: 'required',
    });
    expect(Date.now() - started).toBeLessThan(3000);
    expect(r.status).toBe(200);
  });
});
