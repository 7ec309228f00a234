/**
 * Bad input to every endpoint of the Conversations API and to POST /v1/responses/input_tokens, on a
 * gateway without Redis (the in-memory store): each is a 4xx in OpenAI's error shape naming the
 * parameter, never a 5xx, and nothing reaches the provider.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../harness/gateway.ts';
import { API_KEY, baseConfig, workflow } from '../../harness/manifests.ts';
import { type Simulator, startSimulator } from '../../simulator/index.ts';

let sim: Simulator;
let gw: RunningGateway;
let conv: string;
let item: string;

beforeAll(async () => {
  sim = await startSimulator();
  gw = await startGateway([
    ...baseConfig(sim.url),
    workflow('assistant', { provider: 'oai', model: 'gpt-4o-mini' }),
  ]);
  const created = await call('POST', '/v1/conversations', {
    items: [{ type: 'message', role: 'user', content: 'hi' }],
  });
  expect(created.status).toBe(200);
  conv = (created.json as { id: string }).id;
  const items = await call('GET', `/v1/conversations/${conv}/items`);
  item = (items.json as { data: { id: string }[] }).data[0]!.id;
});
afterAll(async () => {
  await gw?.close();
  await sim?.close();
});

async function call(method: string, path: string, body?: unknown, raw?: string) {
  const res = await fetch(`${gw.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${API_KEY}`,
      ...(body !== undefined || raw !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(raw !== undefined ? { body: raw } : body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, json: JSON.parse(text) as unknown, text };
}

interface ErrorBody {
  error: { message: string; type: string; code: string | null; param: string | null };
}

type Case = [
  name: string,
  method: string,
  path: () => string,
  body: unknown,
  status: number,
  param: string | null,
];

const cases: Case[] = [
  [
    'create: metadata not pairs of strings',
    'POST',
    () => '/v1/conversations',
    { metadata: { a: 1 } },
    400,
    'metadata.a',
  ],
  [
    'create: 17 metadata pairs',
    'POST',
    () => '/v1/conversations',
    { metadata: Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])) },
    400,
    'metadata',
  ],
  ['create: items not a list', 'POST', () => '/v1/conversations', { items: 'hi' }, 400, 'items'],
  [
    'create: more than 20 items',
    'POST',
    () => '/v1/conversations',
    { items: Array(21).fill({ role: 'user', content: 'x' }) },
    400,
    'items',
  ],
  [
    'create: an item of no known role',
    'POST',
    () => '/v1/conversations',
    { items: [{ role: 'robot', content: 'x' }] },
    400,
    'items[0].role',
  ],
  [
    'create: an item type not served',
    'POST',
    () => '/v1/conversations',
    { items: [{ type: 'reasoning', summary: [] }] },
    400,
    'items[0].type',
  ],
  ['create: an unknown parameter', 'POST', () => '/v1/conversations', { title: 'x' }, 400, 'title'],
  ['create: a body that is a list', 'POST', () => '/v1/conversations', [1], 400, null],
  ['retrieve: unknown id', 'GET', () => '/v1/conversations/conv_nope', undefined, 404, null],
  ['update: no metadata', 'POST', () => `/v1/conversations/${conv}`, {}, 400, 'metadata'],
  [
    'update: metadata a string',
    'POST',
    () => `/v1/conversations/${conv}`,
    { metadata: 'x' },
    400,
    'metadata',
  ],
  ['update: unknown id', 'POST', () => '/v1/conversations/conv_nope', { metadata: {} }, 404, null],
  ['delete: unknown id', 'DELETE', () => '/v1/conversations/conv_nope', undefined, 404, null],
  ['items list: limit 0', 'GET', () => `/v1/conversations/${conv}/items?limit=0`, undefined, 400, 'limit'],
  [
    'items list: limit 101',
    'GET',
    () => `/v1/conversations/${conv}/items?limit=101`,
    undefined,
    400,
    'limit',
  ],
  [
    'items list: order sideways',
    'GET',
    () => `/v1/conversations/${conv}/items?order=up`,
    undefined,
    400,
    'order',
  ],
  [
    'items list: after an unknown item',
    'GET',
    () => `/v1/conversations/${conv}/items?after=msg_nope`,
    undefined,
    400,
    'after',
  ],
  [
    'items list: unknown conversation',
    'GET',
    () => '/v1/conversations/conv_nope/items',
    undefined,
    404,
    null,
  ],
  ['items create: no items', 'POST', () => `/v1/conversations/${conv}/items`, {}, 400, 'items'],
  ['items create: empty items', 'POST', () => `/v1/conversations/${conv}/items`, { items: [] }, 400, 'items'],
  [
    'items create: a call without its call_id',
    'POST',
    () => `/v1/conversations/${conv}/items`,
    { items: [{ type: 'function_call', name: 'f', arguments: '{}' }] },
    400,
    'items[0].call_id',
  ],
  [
    'items create: unknown conversation',
    'POST',
    () => '/v1/conversations/conv_nope/items',
    { items: [{ role: 'user', content: 'x' }] },
    404,
    null,
  ],
  [
    'item retrieve: unknown item',
    'GET',
    () => `/v1/conversations/${conv}/items/msg_nope`,
    undefined,
    404,
    'item_id',
  ],
  [
    'item retrieve: unknown conversation',
    'GET',
    () => `/v1/conversations/conv_nope/items/${item}`,
    undefined,
    404,
    null,
  ],
  [
    'item delete: unknown item',
    'DELETE',
    () => `/v1/conversations/${conv}/items/msg_nope`,
    undefined,
    404,
    'item_id',
  ],
  ['input_tokens: no model', 'POST', () => '/v1/responses/input_tokens', { input: 'x' }, 400, 'model'],
  [
    'input_tokens: unknown workflow',
    'POST',
    () => '/v1/responses/input_tokens',
    { model: 'nope', input: 'x' },
    404,
    'model',
  ],
  [
    'input_tokens: input a number',
    'POST',
    () => '/v1/responses/input_tokens',
    { model: 'assistant', input: 3 },
    400,
    'input',
  ],
  [
    'input_tokens: a bad item',
    'POST',
    () => '/v1/responses/input_tokens',
    { model: 'assistant', input: [{ role: 'robot', content: 'x' }] },
    400,
    'input[0].role',
  ],
  [
    'input_tokens: an unknown parameter',
    'POST',
    () => '/v1/responses/input_tokens',
    { model: 'assistant', input: 'x', stream: true },
    400,
    'stream',
  ],
  [
    'input_tokens: unknown conversation',
    'POST',
    () => '/v1/responses/input_tokens',
    { model: 'assistant', conversation: 'conv_nope' },
    404,
    'conversation',
  ],
  [
    'input_tokens: unknown previous response',
    'POST',
    () => '/v1/responses/input_tokens',
    { model: 'assistant', previous_response_id: 'resp_nope' },
    404,
    'previous_response_id',
  ],
  [
    'input_tokens: conversation and previous_response_id',
    'POST',
    () => '/v1/responses/input_tokens',
    { model: 'assistant', conversation: 'conv_1', previous_response_id: 'resp_1' },
    400,
    'conversation',
  ],
];

describe('bad input: a 4xx in the OpenAI shape, never a 5xx', () => {
  it.each(cases)('%s', async (_name, method, path, body, status, param) => {
    const res = await call(method, path(), body);
    expect(res.status, res.text).toBe(status);
    const err = (res.json as ErrorBody).error;
    expect(err.type).toBe('invalid_request_error');
    expect(typeof err.message).toBe('string');
    expect(err.param).toBe(param);
    if (status === 404 && path().includes('/conversations')) expect(err.code).toBe('conversation_not_found');
  });

  it('a body that is not JSON', async () => {
    for (const path of [
      '/v1/conversations',
      `/v1/conversations/${conv}/items`,
      '/v1/responses/input_tokens',
    ]) {
      const res = await call('POST', path, undefined, '{"items":');
      expect(res.status, res.text).toBe(400);
      expect((res.json as ErrorBody).error.type).toBe('invalid_request_error');
    }
  });

  it('nothing reached the provider, and the conversation is as it was', async () => {
    expect(sim.requests()).toEqual([]);
    const res = await call('GET', `/v1/conversations/${conv}/items`);
    expect((res.json as { data: unknown[] }).data).toHaveLength(1);
    expect(((await call('GET', `/v1/conversations/${conv}`)).json as { metadata: unknown }).metadata).toEqual(
      {},
    );
  });

  it('the same under /api/v1', async () => {
    const res = await call('GET', `/api/v1/conversations/${conv}`);
    expect(res.status).toBe(200);
    expect((res.json as { id: string }).id).toBe(conv);
  });
});
