/**
 * Every object and stream event of the compatible surface and the Responses family, as a real gateway
 * in front of the provider simulator produces them for openai, anthropic and gemini slots (text and
 * tool calls), validated against the pinned copy of OpenAI's OpenAPI description. The counts are
 * printed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSse } from '../gateway/native/helpers.ts';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { API_KEY, baseConfig, workflow } from '../harness/manifests.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import { describeErrors, loadOpenApiCopy } from './openapi-schema.ts';

const spec = loadOpenApiCopy();
const PROVIDERS = [
  { provider: 'oai', model: 'gpt-4o-mini' },
  { provider: 'claude', model: 'claude-haiku-4-5' },
  { provider: 'gem', model: 'gemini-2.5-flash' },
] as const;

const WEATHER_PARAMS = {
  type: 'object',
  properties: { city: { type: 'string' } },
  required: ['city'],
  additionalProperties: false,
};

let sim: Simulator;
let gw: RunningGateway;

const tally = { objects: 0, events: 0, failures: 0 };
const eventTypes = new Set<string>();

beforeAll(async () => {
  sim = await startSimulator();
  gw = await startGateway([
    ...baseConfig(sim.url),
    ...PROVIDERS.map((p) => workflow(`chat-${p.provider}`, { provider: p.provider, model: p.model })),
    ...PROVIDERS.map((p) =>
      workflow(`complete-${p.provider}`, { requestType: 'completion', provider: p.provider, model: p.model }),
    ),
    workflow('embed', { requestType: 'embedding', provider: 'oai', model: 'gpt-4o-mini' }),
    workflow('cut', { provider: 'oai', model: 'cut-2' }),
    workflow('down', { provider: 'oai', model: 'fail-503' }),
  ]);
});
afterAll(async () => {
  console.log(
    `openai-openapi conformance (${spec.source.commit.slice(0, 12)}, ${spec.source.date.slice(0, 10)}): ` +
      `${tally.objects} objects validated, ${tally.events} events validated, ${tally.failures} failures; ` +
      `event types: ${[...eventTypes].sort().join(', ')}`,
  );
  await gw?.close();
  await sim?.close();
});

/** Validates one body against a named component; returns the failures, if any, as text. */
function conform(
  schema: string,
  body: unknown,
  where: string,
  kind: 'objects' | 'events' = 'objects',
): string[] {
  tally[kind]++;
  const validate = spec.validator(schema);
  if (validate(body)) return [];
  tally.failures++;
  return [`${where} as ${schema}: ${describeErrors(validate.errors).join('; ')}`];
}

function conformEvent(event: { type?: unknown }, where: string): string[] {
  const type = String(event.type);
  eventTypes.add(type);
  const schema = spec.responseEventSchemas.get(type);
  if (!schema) {
    tally.events++;
    tally.failures++;
    return [`${where}: event type ${type} is not in the description`];
  }
  return conform(schema, event, `${where} ${type}`, 'events');
}

async function post(path: string, body: unknown, key = API_KEY): Promise<Response> {
  return fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function get(path: string, method = 'GET'): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${gw.url}${path}`, { method, headers: { authorization: `Bearer ${API_KEY}` } });
  return { status: res.status, json: await res.json() };
}

/** The data of each SSE frame, parsed, without the chat surface's closing [DONE]. */
async function frames(res: Response): Promise<Record<string, unknown>[]> {
  const text = await res.text();
  return parseSse(text)
    .filter((f) => f.data !== '[DONE]')
    .map((f) => JSON.parse(f.data) as Record<string, unknown>);
}

/**
 * The description has no schema of its own for a streamed completion: chunks reuse the whole
 * object, whose `finish_reason` is never null. OpenAI's own streams (and the SDKs reading them)
 * carry null on every chunk before the last, so a chunk is validated with its pending finish
 * reasons read as settled; everything else about it must conform as is.
 */
function settled(chunk: Record<string, unknown>): Record<string, unknown> {
  const choices = chunk.choices as Record<string, unknown>[];
  return {
    ...chunk,
    choices: choices.map((c) => (c.finish_reason === null ? { ...c, finish_reason: 'stop' } : c)),
  };
}

const chatTools = [{ type: 'function', function: { name: 'get_weather', parameters: WEATHER_PARAMS } }];
const responseTools = [{ type: 'function', name: 'get_weather', parameters: WEATHER_PARAMS, strict: true }];
const customTools = [{ type: 'custom', name: 'apply_patch', description: 'Apply a patch.' }];
const nsTools = [
  {
    type: 'namespace',
    name: 'weather',
    description: 'Weather tools.',
    tools: [{ type: 'function', name: 'get_weather', parameters: WEATHER_PARAMS, strict: true }],
  },
];

describe.each(PROVIDERS)('the compatible surface on a $provider slot', ({ provider }) => {
  const model = `chat-${provider}`;
  const messages = [{ role: 'user', content: 'What is the weather in Paris?' }];

  it.each([
    ['text', {}],
    ['a tool call', { tools: chatTools }],
  ])('chat completion and chunks with %s', async (_label, extra) => {
    const failures: string[] = [];
    const res = await post('/v1/chat/completions', { model, messages, ...extra });
    expect(res.status).toBe(200);
    failures.push(...conform('CreateChatCompletionResponse', await res.json(), 'chat.completion'));
    const streamed = await post('/v1/chat/completions', {
      model,
      messages,
      stream: true,
      stream_options: { include_usage: true },
      ...extra,
    });
    expect(streamed.status).toBe(200);
    const chunks = await frames(streamed);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      failures.push(
        ...conform('CreateChatCompletionStreamResponse', chunk, 'chat.completion.chunk', 'events'),
      );
    }
    expect(failures).toEqual([]);
  });

  it('text completion, whole and streamed', async () => {
    const failures: string[] = [];
    const body = { model: `complete-${provider}`, prompt: 'Once upon a time', max_tokens: 16 };
    const res = await post('/v1/completions', body);
    expect(res.status).toBe(200);
    failures.push(...conform('CreateCompletionResponse', await res.json(), 'text_completion'));
    const streamed = await post('/v1/completions', { ...body, stream: true });
    expect(streamed.status).toBe(200);
    const chunks = await frames(streamed);
    expect(chunks.length).toBeGreaterThan(1);
    for (const chunk of chunks) {
      failures.push(
        ...conform('CreateCompletionResponse', settled(chunk), 'text_completion chunk', 'events'),
      );
    }
    expect(failures).toEqual([]);
  });
});

describe('the compatible surface: embeddings, models, errors', () => {
  it('embeddings, as floats and as base64', async () => {
    const failures: string[] = [];
    for (const encoding_format of ['float', 'base64']) {
      const res = await post('/v1/embeddings', { model: 'embed', input: ['one', 'two'], encoding_format });
      expect(res.status).toBe(200);
      const body = (await res.json()) as { data: { embedding: unknown }[] };
      // The description types every embedding as numbers; base64 is the same little-endian floats
      // as a string (what the SDKs decode), so it is decoded before validating.
      if (encoding_format === 'base64') {
        for (const d of body.data) {
          expect(typeof d.embedding).toBe('string');
          const bytes = Buffer.from(d.embedding as string, 'base64');
          d.embedding = [...new Float32Array(new Uint8Array(bytes).buffer)];
        }
      }
      failures.push(...conform('CreateEmbeddingResponse', body, `embeddings ${encoding_format}`));
    }
    expect(failures).toEqual([]);
  });

  it('the models list and one model', async () => {
    const list = await get('/v1/models');
    const one = await get('/v1/models/chat-oai');
    expect([list.status, one.status]).toEqual([200, 200]);
    expect([
      ...conform('ListModelsResponse', list.json, 'models'),
      ...conform('Model', one.json, 'model'),
    ]).toEqual([]);
  });

  it('error bodies: bad key, unknown model, bad request, provider down, unknown route', async () => {
    const answers = [
      await post('/v1/chat/completions', { model: 'chat-oai', messages: [] }, 'sy_live_nope'),
      await post('/v1/chat/completions', { model: 'nope', messages: [{ role: 'user', content: 'x' }] }),
      await post('/v1/chat/completions', { model: 'chat-oai', messages: 'not a list' }),
      await post('/v1/chat/completions', { model: 'down', messages: [{ role: 'user', content: 'x' }] }),
      await post('/v1/responses', { model: 'chat-oai', input: 5 }),
      await post('/v1/embeddings', { model: 'embed' }),
    ];
    const failures: string[] = [];
    for (const res of answers) {
      expect(res.status).toBeGreaterThanOrEqual(400);
      failures.push(...conform('ErrorResponse', await res.json(), `error ${res.status}`));
    }
    const missing = await get('/v1/responses/resp_doesnotexist');
    expect(missing.status).toBe(404);
    failures.push(...conform('ErrorResponse', missing.json, 'error 404 stored response'));
    expect(failures).toEqual([]);
  });
});

describe.each(PROVIDERS)('the Responses family on a $provider slot', ({ provider }) => {
  const model = `chat-${provider}`;

  it.each([
    ['text', { input: 'Say hello', instructions: 'Be brief.' }],
    ['a tool call', { input: 'What is the weather in Paris?', tools: responseTools }],
    ['a custom tool call', { input: 'Patch it', tools: customTools }],
    ['a namespaced tool call', { input: 'What is the weather in Paris?', tools: nsTools }],
  ])('response object, its stream, retrieval, input_items and delete with %s', async (_label, extra) => {
    const failures: string[] = [];
    const res = await post('/v1/responses', { model, ...extra });
    expect(res.status).toBe(200);
    const created = (await res.json()) as { id: string };
    failures.push(...conform('Response', created, 'response'));

    const retrieved = await get(`/v1/responses/${created.id}`);
    expect(retrieved.status).toBe(200);
    failures.push(...conform('Response', retrieved.json, 'stored response'));
    const items = await get(`/v1/responses/${created.id}/input_items`);
    expect(items.status).toBe(200);
    failures.push(...conform('ResponseItemList', items.json, 'input_items'));
    // The description gives the delete answer no schema; the SDKs read exactly these three fields.
    const deleted = await get(`/v1/responses/${created.id}`, 'DELETE');
    tally.objects++;
    expect(deleted).toEqual({ status: 200, json: { id: created.id, object: 'response', deleted: true } });

    const streamed = await post('/v1/responses', { model, stream: true, ...extra });
    expect(streamed.status).toBe(200);
    const events = await frames(streamed);
    for (const event of events) failures.push(...conformEvent(event, 'stream'));
    expect(events.at(-1)?.type).toBe('response.completed');
    expect(failures).toEqual([]);
  });
});

describe.each(PROVIDERS)('the Responses family continued on a $provider slot', ({ provider }) => {
  const model = `chat-${provider}`;

  it('a tool result sent back by previous_response_id, and an answer cut by max_output_tokens', async () => {
    const failures: string[] = [];
    const first = await post('/v1/responses', { model, input: 'Weather in Oslo?', tools: responseTools });
    const answered = (await first.json()) as { id: string; output: { type: string; call_id?: string }[] };
    const callId = answered.output.find((o) => o.type === 'function_call')?.call_id;
    expect(callId).toBeDefined();
    const followUp = {
      model,
      tools: responseTools,
      previous_response_id: answered.id,
      input: [{ type: 'function_call_output', call_id: callId, output: '{"temp_c": 21}' }],
    };
    const second = await post('/v1/responses', followUp);
    expect(second.status).toBe(200);
    const continued = (await second.json()) as { id: string };
    failures.push(...conform('Response', continued, 'continued response'));
    const items = await get(`/v1/responses/${continued.id}/input_items`);
    expect(items.status).toBe(200);
    failures.push(...conform('ResponseItemList', items.json, 'input_items with a function_call_output'));
    const streamed = await post('/v1/responses', { ...followUp, stream: true });
    for (const event of await frames(streamed)) failures.push(...conformEvent(event, 'continued stream'));

    const cut = { model, input: 'Tell me a long story', max_output_tokens: 4 };
    const whole = await post('/v1/responses', cut);
    expect(whole.status).toBe(200);
    const incomplete = (await whole.json()) as { status: string };
    expect(incomplete.status).toBe('incomplete');
    failures.push(...conform('Response', incomplete, 'incomplete response'));
    const cutStream = await post('/v1/responses', { ...cut, stream: true });
    const events = await frames(cutStream);
    for (const event of events) failures.push(...conformEvent(event, 'incomplete stream'));
    expect(events.at(-1)?.type).toBe('response.incomplete');
    expect(failures).toEqual([]);
  });
});

describe('the Responses family when the provider fails', () => {
  it('a stream cut mid-answer and a provider that is down', async () => {
    const failures: string[] = [];
    const cut = await post('/v1/responses', { model: 'cut', input: 'Tell me a story', stream: true });
    expect(cut.status).toBe(200);
    const events = await frames(cut);
    for (const event of events) failures.push(...conformEvent(event, 'cut stream'));
    expect(['response.failed', 'error']).toContain(events.at(-1)?.type);

    const down = await post('/v1/responses', { model: 'down', input: 'Hello', stream: true });
    if (down.headers.get('content-type')?.includes('text/event-stream')) {
      for (const event of await frames(down)) failures.push(...conformEvent(event, 'down stream'));
    } else {
      failures.push(...conform('ErrorResponse', await down.json(), `down ${down.status}`));
    }
    expect(failures).toEqual([]);
  });
});
