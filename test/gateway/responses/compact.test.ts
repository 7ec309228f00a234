/**
 * POST /v1/responses/compact with the official `openai` SDK at its defaults, on two gateway processes
 * sharing one Redis: a stored conversation compacted on one into the kept user messages and a
 * compaction item, which continues the conversation on the other (the provider receives the summary
 * in place of the earlier turns); the summary call reaches the workflow's provider and is billed;
 * bad input in OpenAI's error shape.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startRedis } from '#devkit/redis';
import { COMPACTION_LEAD } from '#gateway/requests/compaction';
import { type RunningGateway, startGateway } from '../../harness/gateway.ts';
import { API_KEY, baseConfig, workflow } from '../../harness/manifests.ts';
import { type Simulator, startSimulator } from '../../simulator/index.ts';

let sim: Simulator;
let redis: Awaited<ReturnType<typeof startRedis>>;
let a: RunningGateway;
let b: RunningGateway;

const manifests = (simUrl: string) => [
  ...baseConfig(simUrl),
  workflow('assistant', { provider: 'oai', model: 'gpt-4o-mini' }),
  workflow('claude', { provider: 'claude', model: 'claude-haiku-4-5' }),
  workflow('remembers', { provider: 'oai', model: 'gpt-4o-mini', sessionMemory: { enabled: true } }),
];

beforeAll(async () => {
  sim = await startSimulator();
  redis = await startRedis();
  a = await startGateway(manifests(sim.url), { redisUrl: redis.url });
  b = await startGateway(manifests(sim.url), { redisUrl: redis.url });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await redis?.stop();
  await sim?.close();
});
beforeEach(() => sim.clearRequests());

const client = (gw: RunningGateway) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: API_KEY });

describe('POST /v1/responses/compact', () => {
  it.each(['assistant', 'claude'])(
    'compacts a stored conversation into a compaction item that continues it elsewhere (%s)',
    async (model) => {
      const first = await client(a).responses.create({
        model,
        input: 'My name is Ada and I build compilers.',
      });
      const compacted = await client(a).responses.compact({
        model,
        previous_response_id: first.id,
        input: 'Remember that the deadline is Friday.',
      });
      expect(compacted.object).toBe('response.compaction');
      expect(compacted.id).toMatch(/^resp_/);
      const kept = compacted.output.filter((o) => o.type === 'message');
      expect(kept.map((m) => JSON.stringify(m))).toEqual([
        expect.stringContaining('My name is Ada'),
        expect.stringContaining('deadline is Friday'),
      ]);
      const item = compacted.output.at(-1) as { type: string; id: string; encrypted_content: string };
      expect(item.type).toBe('compaction');
      expect(item.id).toMatch(/^cmp_/);
      expect(compacted.usage.total_tokens).toBeGreaterThan(0);
      // The summary call reached the workflow's provider, once, with the conversation in it.
      const calls = sim.requests();
      expect(calls).toHaveLength(2);
      expect(JSON.stringify(calls[1]?.body)).toContain('deadline is Friday');

      sim.clearRequests();
      const next = await client(b).responses.create({
        model,
        input: [...(compacted.output as never[]), { role: 'user', content: 'What is my name?' }],
      });
      expect(next.status).toBe('completed');
      const sent = JSON.stringify(sim.requests()[0]?.body);
      expect(sent).toContain(COMPACTION_LEAD.trim().replace(/\n/g, '\\n'));
      expect(sent).toContain('What is my name?');
      // The stored input lists the compaction item as it was sent.
      const items = await client(b).responses.inputItems.list(next.id, { order: 'asc' });
      expect(items.data.map((i) => i.type)).toEqual(['message', 'message', 'compaction', 'message']);
    },
  );

  it('compacts input alone; a compaction of a compaction keeps only the new summary', async () => {
    const once = await client(a).responses.compact({ model: 'assistant', input: 'Plan the release.' });
    const twice = await client(b).responses.compact({
      model: 'assistant',
      input: [...(once.output as never[]), { role: 'user', content: 'Add the changelog.' }],
    });
    const kept = twice.output.filter((o) => o.type === 'message').map((m) => JSON.stringify(m));
    expect(kept).toEqual([
      expect.stringContaining('Plan the release.'),
      expect.stringContaining('Add the changelog.'),
    ]);
    expect(twice.output.filter((o) => o.type === 'compaction')).toHaveLength(1);
  });
});

describe('bad input, in OpenAI error shape', () => {
  const post = async (path: string, body: unknown) => {
    const res = await fetch(`${a.url}/v1${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, error: ((await res.json()) as { error: Record<string, unknown> }).error };
  };

  it('refuses what cannot be compacted, never a 5xx, and calls no provider', async () => {
    const cases: [unknown, number, string, string][] = [
      [{ model: 'assistant' }, 400, 'invalid_request', 'input'],
      [{ model: 'assistant', input: [] }, 400, 'invalid_request', 'input'],
      [{ input: 'x' }, 400, 'invalid_request', 'model'],
      [{ model: 'nope', input: 'x' }, 404, 'model_not_found', 'model'],
      [
        { model: 'assistant', input: 'x', prompt_cache_retention: '24h' },
        400,
        'unsupported_parameter',
        'prompt_cache_retention',
      ],
      [{ model: 'assistant', input: 'x', tools: [] }, 400, 'unsupported_parameter', 'tools'],
      [
        { model: 'assistant', previous_response_id: 'resp_nope' },
        404,
        'response_not_found',
        'previous_response_id',
      ],
      [{ model: 'remembers', input: 'x' }, 400, 'invalid_request', 'model'],
      [
        { model: 'assistant', input: [{ type: 'compaction', encrypted_content: 'forged' }] },
        400,
        'invalid_request',
        'input[0].encrypted_content',
      ],
    ];
    for (const [body, status, code, param] of cases) {
      const res = await post('/responses/compact', body);
      expect([res.status, res.error.code, res.error.param], JSON.stringify(body)).toEqual([
        status,
        code,
        param,
      ]);
    }
    const forged = await post('/responses', {
      model: 'assistant',
      input: [{ type: 'compaction', encrypted_content: 'sy1.!!!' }],
    });
    expect([forged.status, forged.error.param]).toEqual([400, 'input[0].encrypted_content']);
    expect(sim.requests()).toEqual([]);
  });
});
