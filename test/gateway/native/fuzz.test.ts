/**
 * Property-based fuzzing of POST /v1/ai with fast-check: whatever the body, the answer is never a
 * 5xx, every 4xx has the native error shape, nothing is polluted, and the gateway keeps serving.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY, workflow } from '../../harness/manifests.ts';
import { type Env, type ErrBody, post, type Reply, startEnv, userMsg } from './helpers.ts';

const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
const PERSON = {
  type: 'object',
  properties: { name: { type: 'string' }, age: { type: 'integer' } },
  required: ['name', 'age'],
};

let env: Env;
beforeAll(async () => {
  const wf = (name: string, requestType: string, extra: Record<string, unknown> = {}) =>
    workflow(name, {
      provider: 'oai',
      model: 'gpt-4o-mini',
      requestType,
      backups: [{ provider: 'claude', model: 'claude-haiku-4-5' }],
      cacheFields: ['metadata.customer_id', 'inputs.__proto__', 'metadata.constructor.name'],
      ...extra,
    });
  env = await startEnv(() => [
    wf('chat-wf', 'chat'),
    wf('completion-wf', 'completion'),
    wf('image-wf', 'image'),
    wf('embed-wf', 'embedding'),
    wf('audio-wf', 'audio'),
    wf('vision-wf', 'vision'),
    wf('person-wf', 'chat', { structuredOutput: { schema: PERSON } }),
    wf('tm-wf', 'chat', { testMode: true }),
  ]);
});
afterAll(async () => env?.close());

/** Valid bodies of every request type; mutations start from these. */
const VALID: Record<string, unknown>[] = [
  {
    workflow: 'chat-wf',
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: 'hi' },
    ],
    temperature: 0.5,
    max_tokens: 20,
    top_p: 0.9,
    format: 'wrapped',
    metadata: { customer_id: 'c-1' },
    inputs: { region: 'eu' },
    tools: [
      { type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } },
    ],
    tool_choice: 'none',
  },
  { workflow: 'chat-wf', messages: userMsg(), stream: true },
  { model: 'person-wf', messages: userMsg(), format: 'wrapped' },
  { provider: 'oai', model: 'gpt-4o-mini', messages: userMsg(), structured_output_schema: PERSON },
  {
    workflow: 'chat-wf',
    messages: userMsg(),
    response_format: { type: 'json_schema', json_schema: { name: 'p', schema: PERSON } },
  },
  {
    workflow: 'tm-wf',
    messages: userMsg(),
    format: 'wrapped',
    response_format: { type: 'array', minItems: 2, items: { type: 'string', minLength: 3 } },
  },
  { workflow: 'completion-wf', prompt: 'Once upon a time', max_tokens: 10 },
  { workflow: 'image-wf', prompt: 'a fox', n: 1, size: '256x256', quality: 'hd' },
  { workflow: 'embed-wf', input: ['a', 'b'], encoding_format: 'float' },
  { workflow: 'audio-wf', input: 'say this', voice: 'alloy', response_format: 'mp3' },
  {
    workflow: 'audio-wf',
    file: Buffer.from('fake audio').toString('base64'),
    filename: 'a.mp3',
    language: 'en',
  },
  {
    workflow: 'vision-wf',
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what?' },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png', detail: 'low' } },
        ],
      },
    ],
  },
];

const FIELDS = [
  'workflow',
  'model',
  'provider',
  'messages',
  'prompt',
  'input',
  'temperature',
  'max_tokens',
  'top_p',
  'stop',
  'stream',
  'format',
  'response_format',
  'structured_output_schema',
  'tools',
  'tool_choice',
  'inputs',
  'metadata',
  'context',
  'session_id',
  'user',
  'size',
  'quality',
  'style',
  'n',
  'encoding_format',
  'dimensions',
  'file',
  'filename',
  'language',
  'voice',
  'speed',
];
const PATHS: (string | number)[][] = [
  ...FIELDS.map((f) => [f]),
  ['messages', 0],
  ['messages', 0, 'role'],
  ['messages', 0, 'content'],
  ['messages', 0, 'content', 0],
  ['messages', 0, 'content', 1, 'image_url'],
  ['messages', 0, 'content', 1, 'image_url', 'url'],
  ['messages', 1, 'tool_calls'],
  ['tools', 0, 'function'],
  ['tools', 0, 'function', 'name'],
  ['tools', 0, 'function', 'parameters'],
  ['response_format', 'json_schema', 'schema'],
  ['response_format', 'json_schema', 'schema', 'properties'],
  ['structured_output_schema', 'required'],
  ['response_format', 'minItems'],
  ['response_format', 'items'],
  ['response_format', 'items', 'minLength'],
  ['response_format', 'items', 'type'],
  ['metadata', 'customer_id'],
  ['input', 0],
];
const POLLUTING_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf'];

function nest(depth: number, leaf: unknown, asArray: boolean): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = asArray ? [v] : { a: v };
  return v;
}

function deepSchema(depth: number): Record<string, unknown> {
  let s: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < depth; i++) s = { type: 'object', properties: { a: s }, required: ['a'] };
  return s;
}

const nasty: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(
    1e308,
    -1e308,
    Number.MAX_SAFE_INTEGER,
    -Number.MAX_SAFE_INTEGER,
    2 ** 53 + 1,
    0,
    -1,
    1e-320,
    0.5,
    2.0000001,
    65537,
    4294967297,
  ),
  fc.string({ unit: 'binary', maxLength: 64 }),
  fc.string({ unit: 'grapheme', maxLength: 64 }),
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    '\u202e',
    '\ud800',
    '💥'.repeat(50),
    'chat-wf',
    'oai',
    'gpt-4o-mini',
    'data:,',
  ),
  fc.constantFrom(...POLLUTING_KEYS),
  fc.constantFrom({}, [], null, true, false, [null], [[]], { '': '' }),
  fc.tuple(fc.integer({ min: 50, max: 3000 }), fc.boolean()).map(([d, arr]) => nest(d, 'x', arr)),
  fc.integer({ min: 1, max: 400 }).map(deepSchema),
  fc.integer({ min: 1_000, max: 300_000 }).map((n) => 'x'.repeat(n)),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { minLength: 0, maxLength: 3000 }),
);

type Mutation =
  | { op: 'set'; path: (string | number)[]; value: unknown }
  | { op: 'delete'; path: (string | number)[] }
  | { op: 'extra'; key: string; value: unknown };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ op: fc.constant('set' as const), path: fc.constantFrom(...PATHS), value: nasty }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant('delete' as const), path: fc.constantFrom(...PATHS) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('extra' as const),
      key: fc.oneof(fc.constantFrom(...POLLUTING_KEYS), fc.string({ maxLength: 20 })),
      value: nasty,
    }),
  },
);

type Json = Record<string | number, unknown>;
const isContainer = (v: unknown): v is Json => typeof v === 'object' && v !== null;

/** Applies a mutation; own properties only (`__proto__` becomes a real key, as JSON would carry it). */
function apply(body: Json, m: Mutation): Json {
  if (m.op === 'extra') {
    Object.defineProperty(body, m.key, {
      value: m.value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
    return body;
  }
  let cur: unknown = body;
  for (const key of m.path.slice(0, -1)) {
    if (!isContainer(cur)) return body;
    cur = cur[key];
  }
  if (!isContainer(cur)) return body;
  const last = m.path[m.path.length - 1]!;
  if (m.op === 'delete') delete cur[last];
  else
    Object.defineProperty(cur, last, {
      value: m.value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  return body;
}

/** The invariant every answer must satisfy. */
function expectSane(r: Reply<unknown>, what: unknown): void {
  const ctx = `${r.status} ${r.text.slice(0, 300)} for ${JSON.stringify(what)?.slice(0, 300)}`;
  expect(r.status, ctx).toBeLessThan(500);
  if (r.status >= 400) {
    const e = r.json as ErrBody;
    expect(typeof e?.error, ctx).toBe('string');
    expect(typeof e?.message, ctx).toBe('string');
  } else {
    expect(r.status, ctx).toBe(200);
    const ct = r.headers.get('content-type') ?? '';
    if (ct.startsWith('application/json')) expect(r.json, ctx).not.toBeUndefined();
    else expect(ct, ctx).toMatch(/^text\/event-stream/);
  }
}

async function stillServing(): Promise<void> {
  const r = await post<{ object: string }>(env.gw.url, { workflow: 'chat-wf', messages: userMsg() });
  expect(r.status).toBe(200);
  expect(r.json.object).toBe('chat.completion');
}

describe('fuzzing POST /v1/ai', () => {
  it('arbitrary JSON values as the body: never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.jsonValue({ maxDepth: 4 }),
          fc.object({ maxDepth: 3, key: fc.constantFrom(...FIELDS, ...POLLUTING_KEYS) }),
        ),
        async (body) => {
          const r = await post(env.gw.url, body);
          expectSane(r, body);
        },
      ),
      { numRuns: RUNS },
    );
    await stillServing();
  });

  it('mutations of valid bodies (wrong types, huge numbers, unicode, nested junk, polluting keys): never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: VALID.length - 1 }),
        fc.array(mutation, { minLength: 1, maxLength: 4 }),
        fc.constantFrom('/v1/ai', '/api/v1/ai'),
        async (i, mutations, path) => {
          let body = structuredClone(VALID[i]!) as Json;
          for (const m of mutations) body = apply(body, m);
          const r = await post(env.gw.url, body, { path });
          expectSane(r, body);
        },
      ),
      { numRuns: RUNS },
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    await stillServing();
  });

  it('raw bodies (random text, truncated JSON, __proto__/constructor payloads): never a 5xx, no pollution', async () => {
    const valid = JSON.stringify(VALID[0]);
    const raw = fc.oneof(
      fc.string({ maxLength: 200 }),
      fc.nat({ max: valid.length }).map((n) => valid.slice(0, n)),
      fc
        .constantFrom(...POLLUTING_KEYS)
        .map(
          (k) => `{"workflow":"chat-wf","messages":[{"role":"user","content":"x"}],"${k}":{"polluted":true}}`,
        ),
      fc
        .constantFrom(...POLLUTING_KEYS)
        .map(
          (k) =>
            `{"workflow":"chat-wf","messages":[{"role":"user","content":"x","${k}":{"polluted":true}}],"metadata":{"${k}":{"prototype":{"polluted":true}}}}`,
        ),
      fc.constant(
        '{"constructor":{"prototype":{"polluted":true}},"workflow":"chat-wf","messages":[{"role":"user","content":"x"}]}',
      ),
    );
    await fc.assert(
      fc.asyncProperty(raw, async (text) => {
        const r = await post(env.gw.url, null, { raw: text });
        expectSane(r, text);
      }),
      { numRuns: RUNS },
    );
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
    await stillServing();
  });

  it('arbitrary Authorization headers: 401 unless it is the key, never a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({
            unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
            maxLength: 80,
          }),
          fc
            .string({ unit: fc.constantFrom(...'abcXYZ019_'), minLength: 20, maxLength: 60 })
            .map((s) => `Bearer sy_live_${s}`),
        ),
        async (auth) => {
          const r = await post<ErrBody>(env.gw.url, { workflow: 'chat-wf', messages: userMsg() }, { auth });
          if (auth.trim() === `Bearer ${API_KEY}`) return;
          expect(r.status, auth).toBe(401);
          expect(['missing_api_key', 'invalid_api_key']).toContain(r.json.error);
        },
      ),
      { numRuns: RUNS },
    );
    await stillServing();
  });
});
