/**
 * The pipeline's features apply on the Responses and Messages surfaces exactly as on chat
 * completions: spend caps (402 with the budget fields), rate limits (429 with Retry-After),
 * failover, response-cache hits, request logs; and previous_response_id on a session-memory
 * workflow continues the session.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../harness/gateway.ts';
import { API_KEY, apiKey, baseConfig, project, workflow } from '../../harness/manifests.ts';
import { type Simulator, startSimulator } from '../../simulator/index.ts';
import { spendCap, workflowOf } from '../../spend/manifests.ts';
import { keyWith } from '../native/helpers.ts';

const SPENDER_KEY = 'sy_live_SpenderProjectKey0123456789abcdef';
const READER_KEY = 'sy_live_ReaderConsoleKey0123456789abcdefg';
const LIMITED_KEY = 'sy_live_RateLimitedKey0123456789abcdefghij';

let sim: Simulator;
let gw: RunningGateway;

beforeAll(async () => {
  sim = await startSimulator();
  gw = await startGateway([
    ...baseConfig(sim.url),
    workflow('failover', {
      provider: 'oai',
      model: 'fail-503',
      backups: [{ provider: 'claude', model: 'claude-haiku-4-5' }],
    }),
    workflow('cached', { provider: 'oai', model: 'gpt-4o-mini', responseCache: { ttlSeconds: 600 } }),
    workflow('all-capped', { provider: 'oai', model: 'gpt-4o-mini' }),
    spendCap('all-capped-primary', {
      workflow: 'all-capped',
      slot: 'primary',
      period: 'daily',
      limitUsd: '0',
    }),
    workflow('remember', {
      provider: 'oai',
      model: 'gpt-4o-mini',
      sessionMemory: { enabled: true, ttlSeconds: 600 },
    }),
    workflow('plain', { provider: 'oai', model: 'gpt-4o-mini' }),
    ...apiKey('reader', READER_KEY, { scopes: ['console'] }),
    ...keyWith('limited', LIMITED_KEY, { rateLimit: { requestsPerMinute: 1 } }),
    project('spender'),
    ...apiKey('spender', SPENDER_KEY, { project: 'spender' }),
    workflowOf('spender', 'spender-chat', { provider: 'oai', model: 'gpt-4o-mini' }),
    spendCap('spender-daily', { project: 'spender', period: 'daily', limitUsd: '0.000001' }),
  ]);
});
afterAll(async () => {
  await gw?.close();
  await sim?.close();
});

const openai = (key = API_KEY) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
const anthropic = (key = API_KEY) => new Anthropic({ baseURL: gw.url, apiKey: key, maxRetries: 0 });
const ask = { max_tokens: 50, messages: [{ role: 'user' as const, content: 'hi' }] };

describe('failover', () => {
  it('responses: the backup answers; headers name it', async () => {
    const { data, response } = await openai()
      .responses.create({ model: 'failover', input: 'hi' })
      .withResponse();
    expect(response.headers.get('x-service-used-provider')).toBe('claude');
    expect(data.output_text).toContain('Simulated anthropic');
  });

  it('messages: the backup answers, streamed too', async () => {
    const { data, response } = await anthropic()
      .messages.create({ model: 'failover', ...ask })
      .withResponse();
    expect(response.headers.get('x-service-used-provider')).toBe('claude');
    expect(data.content[0]?.type).toBe('text');
    const streamed = await anthropic()
      .messages.stream({ model: 'failover', ...ask })
      .finalMessage();
    expect(streamed.content[0]?.type === 'text' && streamed.content[0].text).toContain('Simulated anthropic');
  });
});

describe('response cache', () => {
  it('the second identical request is a hit on both surfaces, streamed or not', async () => {
    sim.clearRequests();
    const r1 = await openai().responses.create({ model: 'cached', input: 'cache me' }).withResponse();
    const r2 = await openai().responses.create({ model: 'cached', input: 'cache me' }).withResponse();
    expect(r1.response.headers.get('x-service-cache')).toBe('miss');
    expect(r2.response.headers.get('x-service-cache')).toBe('hit');
    expect(r2.data.output_text).toBe(r1.data.output_text);
    const m1 = await anthropic()
      .messages.create({ model: 'cached', ...ask })
      .withResponse();
    const m2 = await anthropic()
      .messages.create({ model: 'cached', ...ask })
      .withResponse();
    expect(m2.response.headers.get('x-service-cache')).toBe('hit');
    expect(m2.data.content).toEqual(m1.data.content);
    const s = await anthropic()
      .messages.stream({ model: 'cached', ...ask })
      .finalMessage();
    expect(s.content).toEqual(m1.data.content);
    // The Responses and Messages bodies of "hi" are the same canonical request: one upstream call each.
    expect(sim.requests()).toHaveLength(2);
  });
});

describe('spend caps: 402 with the budget fields', () => {
  it('responses: workflow cap', async () => {
    const err = await openai()
      .responses.create({ model: 'all-capped', input: 'x' })
      .catch((e: unknown) => e);
    expect((err as InstanceType<typeof OpenAI.APIError>).status).toBe(402);
    expect((err as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({
      type: 'budget_exceeded',
      code: 'workflow_budget_exceeded',
      scope: 'workflow',
      workflow: 'all-capped',
    });
  });

  it('messages: project cap after the first spend, fields inside error', async () => {
    await anthropic(SPENDER_KEY).messages.create({ model: 'spender-chat', ...ask });
    const err = await anthropic(SPENDER_KEY)
      .messages.create({ model: 'spender-chat', ...ask })
      .catch((e: unknown) => e);
    expect((err as InstanceType<typeof Anthropic.APIError>).status).toBe(402);
    expect((err as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
      type: 'error',
      error: { type: 'budget_exceeded', code: 'project_budget_exceeded', scope: 'project', period: 'daily' },
    });
    const body = (err as InstanceType<typeof Anthropic.APIError>).error as { error: Record<string, unknown> };
    expect(body.error.cap_usd).toBeDefined();
    expect(body.error.reset_at).toBeDefined();
  });
});

describe('rate limits: 429 with Retry-After', () => {
  it('both surfaces', async () => {
    await openai(LIMITED_KEY).responses.create({ model: 'plain', input: 'x' });
    const r = await openai(LIMITED_KEY)
      .responses.create({ model: 'plain', input: 'x' })
      .catch((e: unknown) => e);
    expect(r).toBeInstanceOf(OpenAI.RateLimitError);
    expect(Number((r as InstanceType<typeof OpenAI.APIError>).headers?.get('retry-after'))).toBeGreaterThan(
      0,
    );
    const m = await anthropic(LIMITED_KEY)
      .messages.create({ model: 'plain', ...ask })
      .catch((e: unknown) => e);
    expect(m).toBeInstanceOf(Anthropic.RateLimitError);
    expect((m as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
      error: { type: 'rate_limit_error' },
    });
    expect(
      Number((m as InstanceType<typeof Anthropic.APIError>).headers?.get('retry-after')),
    ).toBeGreaterThan(0);
  });
});

describe('request logs name the surface', () => {
  it('responses and messages entries', async () => {
    await openai().responses.create({ model: 'plain', input: 'logged' });
    await anthropic().messages.create({ model: 'plain', ...ask });
    const res = await fetch(`${gw.url}/api/v1/request-logs?limit=50`, {
      headers: { authorization: `Bearer ${READER_KEY}` },
    });
    const logs = (await res.json()) as { data: { surface: string; path: string; workflow: string }[] };
    expect(logs.data.map((e) => e.surface)).toEqual(expect.arrayContaining(['responses', 'messages']));
  });
});

describe('previous_response_id on a session-memory workflow continues the session', () => {
  it('the second turn is sent with the session history and keeps the session id', async () => {
    sim.clearRequests();
    const first = await openai()
      .responses.create({ model: 'remember', input: 'My name is Ada.' })
      .withResponse();
    const session = first.response.headers.get('x-service-session-id');
    expect(session).toBeTruthy();
    const second = await openai()
      .responses.create({ model: 'remember', input: 'What is my name?', previous_response_id: first.data.id })
      .withResponse();
    expect(second.response.headers.get('x-service-session-id')).toBe(session);
    const sent = sim.requests()[1]!.body as { messages: { role: string; content: string }[] };
    expect(sent.messages.map((m) => m.content)).toEqual([
      'My name is Ada.',
      expect.stringContaining('Simulated openai'),
      'What is my name?',
    ]);
  });
});
