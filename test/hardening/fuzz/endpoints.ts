/**
 * Every endpoint of the gateway as the fuzz suite calls it: a valid request to start from, and an
 * arbitrary of hostile variations of it (bodies, path parameters, query strings, credentials).
 */
import fc from 'fast-check';
import {
  mutate,
  mutations,
  pathParam,
  pathsOf,
  queryString,
  Raw,
  rawBodies,
  routedParam,
  toJson,
} from './values.ts';

export type Credential = 'ai' | 'admin' | 'console' | 'none' | 'garbage';

export interface Call {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  /** JSON text (or not-quite-JSON text), sent as application/json unless contentType says otherwise. */
  body?: string;
  contentType?: string;
  form?: { fields: Record<string, string>; file?: Uint8Array };
  credential: Credential;
}

export interface Endpoint {
  name: string;
  /** The error shape of its answers; `either` for paths no route serves. */
  surface: 'native' | 'compat' | 'messages' | 'either';
  /** Authenticated requests (any key of the project) get a request-log entry. */
  logged: boolean;
  runs: number;
  call: fc.Arbitrary<Call>;
}

export const PERSON = {
  type: 'object',
  properties: { name: { type: 'string' }, age: { type: 'integer' } },
  required: ['name', 'age'],
};

const user = [{ role: 'user', content: 'hello there' }];

const NATIVE: Record<string, unknown>[] = [
  {
    workflow: 'chat-wf',
    messages: [{ role: 'system', content: 'be brief' }, ...user],
    temperature: 0.5,
    max_tokens: 20,
    format: 'wrapped',
    metadata: { customer_id: 'c-1' },
    tools: [
      { type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } },
    ],
    tool_choice: 'auto',
  },
  { workflow: 'claude-wf', messages: user, stream: true },
  {
    workflow: 'gem-wf',
    messages: user,
    response_format: { type: 'json_schema', json_schema: { name: 'p', schema: PERSON } },
  },
  { workflow: 'person-wf', messages: user, format: 'wrapped' },
  { provider: 'oai', model: 'gpt-4o-mini', messages: user, structured_output_schema: PERSON },
  { workflow: 'tm-wf', messages: user, response_format: { type: 'array', items: { type: 'string' } } },
  { workflow: 'session-wf', messages: user },
  { workflow: 'cache-wf', messages: user, format: 'wrapped' },
  { workflow: 'completion-wf', prompt: 'Once upon a time', max_tokens: 10 },
  { workflow: 'image-wf', prompt: 'a fox', n: 1, size: '256x256' },
  { workflow: 'embed-wf', input: ['a', 'b'], encoding_format: 'float' },
  { workflow: 'audio-wf', input: 'say this', voice: 'alloy', response_format: 'mp3' },
  { workflow: 'audio-wf', file: Buffer.from('fake audio').toString('base64'), filename: 'a.mp3' },
  {
    workflow: 'claude-wf',
    messages: [
      ...user,
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{"q":"x"}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: '{"found":true}' },
    ],
  },
];

const ASYNC: Record<string, unknown>[] = [
  { workflow: 'tm-wf', messages: user },
  { workflow: 'chat-wf', messages: user, metadata: { customer_id: 'c-2' } },
  { workflow: 'pipeline-wf', messages: user },
];

const COMPAT_CHAT: Record<string, unknown>[] = [
  { model: 'chat-wf', messages: user, temperature: 0.2, metadata: { customer_id: 'c-3' } },
  { model: 'claude-wf', messages: user, stream: true, stream_options: { include_usage: true } },
  {
    model: 'gem-wf',
    messages: user,
    response_format: { type: 'json_schema', json_schema: { name: 'p', schema: PERSON } },
  },
  {
    model: 'chat-wf',
    messages: user,
    tools: [
      {
        type: 'function',
        function: { name: 'f', parameters: { type: 'object', properties: { a: { type: 'string' } } } },
      },
    ],
  },
];

const COMPAT_COMPLETION: Record<string, unknown>[] = [
  { model: 'completion-wf', prompt: 'Once upon a time', max_tokens: 10, stop: ['\n'], temperature: 0.3 },
  { model: 'completion-wf', prompt: ['Once'], stream: true, stream_options: { include_usage: true }, n: 1 },
  { model: 'completion-wf', prompt: 'x', seed: 1, presence_penalty: 0.5, logit_bias: { '50256': -100 } },
];

const RESPONSES: Record<string, unknown>[] = [
  { model: 'chat-wf', input: 'hello there', instructions: 'be brief', max_output_tokens: 20 },
  {
    model: 'claude-wf',
    input: [{ role: 'user', content: [{ type: 'input_text', text: 'hello there' }] }],
    stream: true,
    tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} } }],
  },
  {
    model: 'gem-wf',
    input: 'a person please',
    text: { format: { type: 'json_schema', name: 'p', schema: PERSON } },
    store: false,
  },
  { model: 'chat-wf', input: 'hello there', background: true, stream: true },
];

const MESSAGES: Record<string, unknown>[] = [
  { model: 'claude-wf', max_tokens: 64, messages: user, system: 'be brief' },
  {
    model: 'chat-wf',
    max_tokens: 64,
    stream: true,
    messages: [
      ...user,
      { role: 'assistant', content: [{ type: 'tool_use', id: 'tu_1', name: 'lookup', input: { q: 'x' } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'tu_1', content: 'found' }] },
    ],
    tools: [{ name: 'lookup', input_schema: { type: 'object', properties: { q: { type: 'string' } } } }],
  },
];

const CONSOLE_BODY = {
  name: 'fz-1',
  provider: 'oai',
  model: 'gpt-4o-mini',
  request_type: 'chat',
  backup_1_provider: 'claude',
  backup_1_model: 'claude-haiku-4-5',
  testMode: true,
  structuredOutput: { schema: PERSON },
  cacheFields: ['metadata.customer_id'],
};

const prefix = fc.constantFrom('/v1', '/api/v1');
const credential = (main: Credential): fc.Arbitrary<Credential> =>
  fc.oneof(
    { weight: 12, arbitrary: fc.constant(main) },
    {
      weight: 1,
      arbitrary: fc.constantFrom<Credential>('none', 'garbage', main === 'ai' ? 'console' : 'ai'),
    },
  );

/** A body: a valid one mutated, a valid one as is, or raw text. */
function bodies(valid: readonly Record<string, unknown>[]): fc.Arbitrary<string> {
  return fc.nat({ max: valid.length - 1 }).chain((i) => {
    const base = valid[i] as Record<string, unknown>;
    const text = toJson(base);
    return fc.oneof(
      { weight: 7, arbitrary: mutations(pathsOf(base)).map((ms) => toJson(mutate(base, ms))) },
      { weight: 1, arbitrary: fc.constant(text) },
      { weight: 2, arbitrary: rawBodies(text) },
    );
  });
}

const post = (path: fc.Arbitrary<string>, body: fc.Arbitrary<string>, main: Credential): fc.Arbitrary<Call> =>
  fc.record({ method: fc.constant('POST' as const), path, body, credential: credential(main) });
const get = (path: fc.Arbitrary<string>, main: Credential): fc.Arbitrary<Call> =>
  fc.record({ method: fc.constant('GET' as const), path, credential: credential(main) });

export function endpoints(runs: number, channels: () => string[]): Endpoint[] {
  const channelId = fc.oneof(
    // Channels exist once the suite has started (after the endpoints are listed): picked lazily.
    { weight: 2, arbitrary: fc.nat({ max: 1000 }).map((i) => channels()[i % channels().length] ?? 'none') },
    { weight: 1, arbitrary: routedParam },
  );
  const consoleBase = '/api/console/projects/team.app/workflows';
  const consoleName = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom('fz-1', 'fz-2', 'fz-3', 'handmade', 'chat-wf') },
    { weight: 1, arbitrary: pathParam },
    { weight: 1, arbitrary: fc.constant('n'.repeat(2000)) },
  );
  const consoleBodies = fc
    .tuple(bodies([CONSOLE_BODY]), fc.constantFrom('fz-1', 'fz-2', 'fz-3'))
    .map(([b, name]) => b.replace('"fz-1"', JSON.stringify(name)));
  // A client resolves `.` and `..` segments (also percent-encoded) before sending: such an id leaves
  // the surface's path, and its answer is then a path no route serves.
  const responseId = pathParam.filter((p) => !/^(?:\.|%2e){1,2}$/i.test(p));
  const qs = (known: string[]) => queryString(known).map((q) => (q ? `?${q}` : ''));
  return [
    {
      name: 'POST /v1/ai',
      surface: 'native',
      logged: true,
      runs,
      call: post(
        prefix.map((p) => `${p}/ai`),
        bodies(NATIVE),
        'ai',
      ),
    },
    {
      name: 'POST /v1/ai/async',
      surface: 'native',
      logged: true,
      runs,
      call: post(
        prefix.map((p) => `${p}/ai/async`),
        bodies(ASYNC),
        'ai',
      ),
    },
    {
      name: 'GET /v1/ai/async/{id}',
      surface: 'native',
      logged: false,
      runs: Math.ceil(runs / 3),
      call: get(
        fc.tuple(prefix, channelId).map(([p, id]) => `${p}/ai/async/${id}`),
        'ai',
      ),
    },
    {
      name: 'POST /v1/callback/{id}',
      surface: 'native',
      logged: true,
      runs,
      call: post(
        fc.tuple(prefix, channelId).map(([p, id]) => `${p}/callback/${id}`),
        bodies([{ data: { approved: true, note: 'ok' }, task_id: 't-1', metadata: { by: 'fuzz' } }]),
        'ai',
      ),
    },
    {
      name: 'GET /v1/request-logs',
      surface: 'native',
      logged: false,
      runs: Math.ceil(runs / 3),
      call: get(
        fc
          .tuple(
            prefix,
            qs(['workflow', 'status', 'session_id', 'channel_id', 'type', 'from', 'to', 'cursor', 'limit']),
          )
          .map(([p, q]) => `${p}/request-logs${q}`),
        'admin',
      ),
    },
    {
      name: 'GET /v1/usage',
      surface: 'native',
      logged: false,
      runs: Math.ceil(runs / 3),
      call: get(
        fc.tuple(prefix, qs(['from', 'to', 'group_by', 'granularity'])).map(([p, q]) => `${p}/usage${q}`),
        'admin',
      ),
    },
    {
      name: 'GET /v1/sessions/{id}',
      surface: 'native',
      logged: false,
      runs: Math.ceil(runs / 4),
      call: get(
        fc.tuple(prefix, pathParam).map(([p, id]) => `${p}/sessions/${id}`),
        'admin',
      ),
    },
    {
      name: 'webhook dead letters (list, replay, replay one)',
      surface: 'native',
      logged: false,
      runs: Math.ceil(runs / 3),
      call: fc.oneof(
        get(
          fc.tuple(prefix, qs(['since', 'limit'])).map(([p, q]) => `${p}/webhooks/dead-letters${q}`),
          'admin',
        ),
        post(
          prefix.map((p) => `${p}/webhooks/dead-letters/replay`),
          bodies([{ since: 0 }]),
          'admin',
        ),
        post(
          fc.tuple(prefix, pathParam).map(([p, id]) => `${p}/webhooks/dead-letters/${id}/replay`),
          fc.constant('{}'),
          'admin',
        ),
      ),
    },
    {
      name: 'console: POST, PUT workflows',
      surface: 'native',
      logged: false,
      runs: Math.ceil(runs / 2),
      call: fc.oneof(
        post(fc.constant(consoleBase), consoleBodies, 'admin'),
        fc.record({
          method: fc.constant('PUT' as const),
          path: consoleName.map((n) => `${consoleBase}/${n}`),
          body: consoleBodies.map((b) => b.replace(/"name":"fz-\d",?/, '')),
          credential: credential('admin'),
        }),
      ),
    },
    {
      name: 'console: GET, DELETE workflows',
      surface: 'native',
      logged: false,
      runs: Math.ceil(runs / 2),
      call: fc.oneof(
        get(fc.constant(consoleBase), 'admin'),
        get(
          consoleName.map((n) => `${consoleBase}/${n}`),
          'admin',
        ),
        fc.record({
          method: fc.constant('DELETE' as const),
          path: consoleName.map((n) => `${consoleBase}/${n}`),
          credential: credential('admin'),
        }),
        get(
          pathParam.map((p) => `/api/console/projects/${p}/workflows`),
          'admin',
        ),
      ),
    },
    {
      name: 'POST /v1/chat/completions',
      surface: 'compat',
      logged: true,
      runs,
      call: post(
        prefix.map((p) => `${p}/chat/completions`),
        bodies(COMPAT_CHAT),
        'ai',
      ),
    },
    {
      name: 'POST /v1/completions',
      surface: 'compat',
      logged: true,
      runs,
      call: post(
        prefix.map((p) => `${p}/completions`),
        bodies(COMPAT_COMPLETION),
        'ai',
      ),
    },
    {
      name: 'POST /v1/embeddings, images, audio/speech',
      surface: 'compat',
      logged: true,
      runs,
      call: fc.oneof(
        post(
          prefix.map((p) => `${p}/embeddings`),
          bodies([{ model: 'embed-wf', input: ['a', 'b'], dimensions: 8 }]),
          'ai',
        ),
        post(
          prefix.map((p) => `${p}/images/generations`),
          bodies([{ model: 'image-wf', prompt: 'a fox', n: 1 }]),
          'ai',
        ),
        post(
          prefix.map((p) => `${p}/audio/speech`),
          bodies([{ model: 'audio-wf', input: 'hello', voice: 'alloy', response_format: 'mp3' }]),
          'ai',
        ),
      ),
    },
    {
      name: 'POST /v1/audio/transcriptions (multipart)',
      surface: 'compat',
      logged: true,
      runs: Math.ceil(runs / 2),
      call: fc.record({
        method: fc.constant('POST' as const),
        path: prefix.map((p) => `${p}/audio/transcriptions`),
        form: fc.record({
          fields: fc.dictionary(
            fc.constantFrom(
              'model',
              'language',
              'prompt',
              'response_format',
              'temperature',
              '__proto__',
              'x',
            ),
            fc.oneof(
              fc.constantFrom('audio-wf', 'chat-wf', 'json', 'text', 'verbose_json', 'en', '0.5'),
              fc.string({ maxLength: 30 }),
            ),
            { maxKeys: 5 },
          ),
          file: fc.option(fc.uint8Array({ maxLength: 2048 }), { nil: undefined }),
        }),
        credential: credential('ai'),
      }),
    },
    {
      name: 'GET /v1/models, /models/{model}, /provider-models',
      surface: 'compat',
      logged: true,
      runs: Math.ceil(runs / 3),
      call: get(
        fc
          .tuple(
            prefix,
            fc.oneof(
              fc.constant('/models'),
              routedParam.map((m) => `/models/${m}`),
              fc.constant('/provider-models'),
            ),
          )
          .map(([p, rest]) => `${p}${rest}`),
        'ai',
      ),
    },
    {
      name: 'POST /v1/responses',
      surface: 'compat',
      logged: true,
      runs,
      call: post(
        prefix.map((p) => `${p}/responses`),
        bodies(RESPONSES),
        'ai',
      ),
    },
    {
      name: 'GET, DELETE /v1/responses/{id}, /input_items',
      surface: 'compat',
      logged: false,
      runs: Math.ceil(runs / 3),
      call: fc.oneof(
        get(
          fc
            .tuple(prefix, responseId, fc.constantFrom('', '/input_items'), qs(['limit', 'order', 'after']))
            .map(([p, id, rest, q]) => `${p}/responses/${id}${rest}${q}`),
          'ai',
        ),
        fc.record({
          method: fc.constant('DELETE' as const),
          path: fc.tuple(prefix, responseId).map(([p, id]) => `${p}/responses/${id}`),
          credential: credential('ai'),
        }),
      ),
    },
    {
      name: 'POST /v1/responses/input_tokens',
      surface: 'compat',
      logged: false,
      runs: Math.ceil(runs / 3),
      call: post(
        prefix.map((p) => `${p}/responses/input_tokens`),
        bodies([
          { model: 'chat-wf', input: 'hello there', instructions: 'be brief' },
          { model: 'claude-wf', conversation: 'conv_1', tools: RESPONSES[1]!.tools },
        ]),
        'ai',
      ),
    },
    {
      name: 'POST /v1/responses/compact',
      surface: 'compat',
      logged: true,
      runs: Math.ceil(runs / 3),
      call: post(
        prefix.map((p) => `${p}/responses/compact`),
        bodies([
          { model: 'chat-wf', input: 'hello there', instructions: 'be brief' },
          { model: 'claude-wf', input: [{ type: 'compaction', encrypted_content: 'sy1.e30' }] },
        ]),
        'ai',
      ),
    },
    {
      name: 'POST /v1/responses/{id}/cancel, GET /v1/responses/{id}?stream=true',
      surface: 'compat',
      logged: false,
      runs: Math.ceil(runs / 3),
      call: fc.oneof(
        fc.record({
          method: fc.constant('POST' as const),
          path: fc.tuple(prefix, responseId).map(([p, id]) => `${p}/responses/${id}/cancel`),
          credential: credential('ai'),
        }),
        get(
          fc
            .tuple(prefix, responseId, qs(['stream', 'starting_after', 'include_obfuscation']))
            .map(([p, id, q]) => `${p}/responses/${id}${q}`),
          'ai',
        ),
      ),
    },
    {
      name: 'the Conversations API',
      surface: 'compat',
      logged: false,
      runs: Math.ceil(runs / 2),
      call: fc.oneof(
        post(
          prefix.map((p) => `${p}/conversations`),
          bodies([{ metadata: { a: 'b' }, items: [{ type: 'message', role: 'user', content: 'hi' }] }]),
          'ai',
        ),
        post(
          fc
            .tuple(prefix, responseId, fc.constantFrom('', '/items'))
            .map(([p, id, rest]) => `${p}/conversations/${id}${rest}`),
          bodies([{ metadata: { a: 'b' } }, { items: [{ role: 'user', content: 'hi' }] }]),
          'ai',
        ),
        get(
          fc
            .tuple(
              prefix,
              responseId,
              fc.constantFrom('', '/items', '/items/msg_1'),
              qs(['limit', 'order', 'after']),
            )
            .map(([p, id, rest, q]) => `${p}/conversations/${id}${rest}${q}`),
          'ai',
        ),
        fc.record({
          method: fc.constant('DELETE' as const),
          path: fc
            .tuple(prefix, responseId, fc.constantFrom('', '/items/msg_1'))
            .map(([p, id, rest]) => `${p}/conversations/${id}${rest}`),
          credential: credential('ai'),
        }),
      ),
    },
    {
      name: 'POST /v1/messages, /messages/count_tokens',
      surface: 'messages',
      logged: true,
      runs,
      call: fc.oneof(
        post(
          prefix.map((p) => `${p}/messages`),
          bodies(MESSAGES),
          'ai',
        ),
        post(
          prefix.map((p) => `${p}/messages/count_tokens`),
          bodies([{ model: 'claude-wf', messages: user, system: 'be brief' }]),
          'ai',
        ),
      ),
    },
    {
      name: 'paths no route serves',
      surface: 'either',
      logged: false,
      runs: Math.ceil(runs / 4),
      call: fc.record({
        method: fc.constantFrom('GET' as const, 'POST' as const, 'DELETE' as const),
        path: fc.oneof(
          fc.tuple(prefix, pathParam).map(([p, x]) => `${p}/${x}`),
          fc.constantFrom(
            '/v1/moderations',
            '/v1/messages/batches',
            '/v1/files/x',
            '/',
            '/v2/ai',
            `/v1/${'x'.repeat(3000)}`,
          ),
        ),
        body: fc.constant(toJson(new Raw('{"a":1}'))),
        credential: credential('ai'),
      }),
    },
  ];
}
