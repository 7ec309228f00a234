/**
 * Background responses and compaction, validated against the pinned copy of OpenAI's OpenAPI
 * description: a background response as accepted (`queued`), as polled until it finished, its stream
 * (`response.queued` included) and the same stream resumed after a sequence number, a cancelled one
 * and a failed one; a compacted conversation (`response.compaction`) and the input items of the
 * response it continued; on openai, anthropic and gemini slots. The counts are printed.
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

let sim: Simulator;
let gw: RunningGateway;
const tally = { objects: 0, events: 0, failures: 0 };
const statuses = new Set<string>();
const eventTypes = new Set<string>();

beforeAll(async () => {
  sim = await startSimulator();
  gw = await startGateway([
    ...baseConfig(sim.url),
    ...PROVIDERS.map((p) => workflow(`chat-${p.provider}`, { provider: p.provider, model: p.model })),
    workflow('hang', { provider: 'oai', model: 'hang' }),
    workflow('down', { provider: 'oai', model: 'fail-503' }),
  ]);
});
afterAll(async () => {
  console.log(
    `openai-openapi conformance, background responses and compaction (${spec.source.commit.slice(0, 12)}): ` +
      `${tally.objects} objects validated, ${tally.events} events validated, ${tally.failures} failures; ` +
      `statuses: ${[...statuses].sort().join(', ')}; event types: ${[...eventTypes].sort().join(', ')}`,
  );
  await gw?.close();
  await sim?.close();
});

function conform(
  schema: string,
  body: unknown,
  where: string,
  kind: 'objects' | 'events' = 'objects',
): string[] {
  tally[kind]++;
  const status = (body as { status?: unknown }).status;
  if (kind === 'objects' && typeof status === 'string') statuses.add(status);
  const validate = spec.validator(schema);
  if (validate(body)) return [];
  tally.failures++;
  return [`${where} as ${schema}: ${describeErrors(validate.errors).join('; ')}`];
}

function conformEvents(events: Record<string, unknown>[], where: string): string[] {
  return events.flatMap((e) => {
    const type = String(e.type);
    eventTypes.add(type);
    const schema = spec.responseEventSchemas.get(type);
    if (schema) return conform(schema, e, `${where} ${type}`, 'events');
    tally.failures++;
    return [`${where}: event type ${type} is not in the description`];
  });
}

async function call(path: string, body?: unknown): Promise<Response> {
  return fetch(`${gw.url}${path}`, {
    method: body === undefined && !path.endsWith('/cancel') ? 'GET' : 'POST',
    headers: {
      authorization: `Bearer ${API_KEY}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

const frames = async (res: Response) =>
  parseSse(await res.text()).map((f) => JSON.parse(f.data) as Record<string, unknown>);

async function settled(id: string, failures: string[]): Promise<Record<string, unknown>> {
  for (let i = 0; i < 300; i++) {
    const r = (await (await call(`/v1/responses/${id}`)).json()) as Record<string, unknown>;
    failures.push(...conform('Response', r, `polled ${r.status}`));
    if (r.status !== 'queued' && r.status !== 'in_progress') return r;
    await new Promise((res) => setTimeout(res, 30));
  }
  throw new Error(`${id} never finished`);
}

describe.each(PROVIDERS)('background responses on a $provider slot', ({ provider }) => {
  const model = `chat-${provider}`;

  it('queued, polled until completed; streamed, and the stream resumed after a sequence number', async () => {
    const failures: string[] = [];
    const res = await call('/v1/responses', { model, input: 'Say hello', background: true });
    expect(res.status).toBe(200);
    const queued = (await res.json()) as { id: string; status: string };
    expect(queued.status).toBe('queued');
    failures.push(...conform('Response', queued, 'queued response'));
    expect((await settled(queued.id, failures)).status).toBe('completed');
    const cancelled = await call(`/v1/responses/${queued.id}/cancel`);
    failures.push(...conform('Response', await cancelled.json(), 'cancel of a completed response'));

    const streamed = await call('/v1/responses', {
      model,
      input: 'Say hello',
      background: true,
      stream: true,
    });
    const events = await frames(streamed);
    failures.push(...conformEvents(events, 'background stream'));
    expect(events.at(-1)?.type).toBe('response.completed');
    const id = String((events[0]?.response as { id?: string } | undefined)?.id);
    const resumed = await frames(await call(`/v1/responses/${id}?stream=true&starting_after=2`));
    failures.push(...conformEvents(resumed, 'resumed stream'));
    expect(resumed).toEqual(events.slice(3));
    expect(failures).toEqual([]);
  });
});

describe('background responses that do not complete', () => {
  it('cancelled while running, and failed when the provider is down', async () => {
    const failures: string[] = [];
    const hung = (await (
      await call('/v1/responses', { model: 'hang', input: 'x', background: true })
    ).json()) as {
      id: string;
    };
    const cancel = await call(`/v1/responses/${hung.id}/cancel`);
    expect(cancel.status).toBe(200);
    failures.push(...conform('Response', await cancel.json(), 'cancelled response'));
    const down = (await (
      await call('/v1/responses', { model: 'down', input: 'x', background: true })
    ).json()) as {
      id: string;
    };
    expect((await settled(down.id, failures)).status).toBe('failed');
    const failedStream = await call('/v1/responses', {
      model: 'down',
      input: 'x',
      background: true,
      stream: true,
    });
    const events = await frames(failedStream);
    failures.push(...conformEvents(events, 'failed background stream'));
    expect(events.at(-1)?.type).toBe('error');
    const notBackground = await call(`/v1/responses/resp_none/cancel`);
    failures.push(...conform('ErrorResponse', await notBackground.json(), 'cancel of an unknown response'));
    expect(failures).toEqual([]);
  });
});

describe.each(PROVIDERS)('compaction on a $provider slot', ({ provider }) => {
  it('the compacted response, and a response continued from its compaction item', async () => {
    const failures: string[] = [];
    const model = `chat-${provider}`;
    const first = (await (await call('/v1/responses', { model, input: 'Plan the launch.' })).json()) as {
      id: string;
    };
    const res = await call('/v1/responses/compact', {
      model,
      previous_response_id: first.id,
      input: 'And the docs.',
    });
    expect(res.status).toBe(200);
    const compacted = (await res.json()) as { output: unknown[] };
    failures.push(...conform('CompactResource', compacted, 'compacted response'));
    const next = await call('/v1/responses', {
      model,
      input: [...compacted.output, { role: 'user', content: 'Go on.' }],
    });
    expect(next.status).toBe(200);
    const continued = (await next.json()) as { id: string };
    failures.push(...conform('Response', continued, 'response continued from a compaction'));
    const items = await call(`/v1/responses/${continued.id}/input_items`);
    failures.push(...conform('ResponseItemList', await items.json(), 'input_items with a compaction item'));
    expect(failures).toEqual([]);
  });
});

describe('empty lists', () => {
  it('input_items and conversation items with nothing on the page: first_id and last_id null', async () => {
    const failures: string[] = [];
    // OpenAI's API sends null ids on an empty page; the description types them as strings, so an
    // empty page is validated with the nulls read as ids, and the nulls themselves are asserted.
    const asDescribed = (list: Record<string, unknown>) => ({ ...list, first_id: '', last_id: '' });
    const created = (await (await call('/v1/responses', { model: 'chat-oai', input: 'hi' })).json()) as {
      id: string;
    };
    const all = (await (await call(`/v1/responses/${created.id}/input_items`)).json()) as {
      data: { id: string }[];
    };
    const empty = (await (
      await call(`/v1/responses/${created.id}/input_items?after=${all.data.at(-1)?.id}`)
    ).json()) as Record<string, unknown>;
    expect(empty).toEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false });
    failures.push(...conform('ResponseItemList', asDescribed(empty), 'empty input_items'));
    const conv = (await (await call('/v1/conversations', {})).json()) as { id: string };
    const items = (await (await call(`/v1/conversations/${conv.id}/items`)).json()) as Record<
      string,
      unknown
    >;
    expect(items).toEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false });
    failures.push(...conform('ConversationItemList', asDescribed(items), 'empty conversation items'));
    const full = await call(`/v1/conversations/${conv.id}/items`, {
      items: [{ type: 'message', role: 'user', content: 'hello' }],
    });
    failures.push(...conform('ConversationItemList', await full.json(), 'added conversation items'));
    expect(failures).toEqual([]);
  });
});
