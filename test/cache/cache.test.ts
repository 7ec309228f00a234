import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningRedis, startRedis } from '#devkit/redis';
import { type ErrBody, type Wrapped as NativeWrapped, parseSse, post } from '../gateway/native/helpers.ts';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { API_KEY, apiKey, baseConfig, OTHER_KEY, project, workflow } from '../harness/manifests.ts';
import {
  ADMIN_KEY,
  adminKeys,
  type LogEntry,
  logs,
  OTHER_ADMIN_KEY,
  workflowIn,
} from '../sessions/helpers.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import { spendCap } from '../spend/manifests.ts';

/**
 * The response cache end to end on both surfaces, on the memory and the Redis adapters: hit, miss,
 * bypass (sessions, no-cache, no-store), zero cost with the cost saved in the log, SSE replay,
 * isolation between projects, invalidation on a workflow change, failures never cached, a hit
 * under an exhausted project cap.
 */

/** The wrapped body with the cache's meta field. */
type Wrapped = NativeWrapped & { meta: NativeWrapped['meta'] & { cache?: string } };

const T0 = Date.parse('2026-11-23T10:15:00.000Z');
/** A project of its own with a tiny monthly cap, so the cap test spends nobody else's budget. */
const THRIFTY_KEY = 'sy_live_ThriftyProjectKey0123456789abcdefg';

const cached = (extra: Record<string, unknown> = {}) => ({
  provider: 'oai',
  model: 'gpt-4o-mini',
  responseCache: { ttlSeconds: 300 },
  ...extra,
});

function config(simUrl: string, faq: Record<string, unknown> = {}) {
  return [
    ...baseConfig(simUrl),
    ...adminKeys(),
    workflow('faq', cached({ systemInstructions: 'Answer from the FAQ.', ...faq })),
    workflow('faq-schema', {
      ...cached(),
      structuredOutput: {
        schema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'] },
      },
    }),
    workflow('faq-broken', cached({ model: 'fail-503' })),
    workflow('faq-session', cached({ sessionMemory: { enabled: true } })),
    workflowIn('other', 'other-faq', {
      name: 'faq',
      ...cached({ systemInstructions: 'Answer from the FAQ.' }),
    }),
    project('thrifty'),
    ...apiKey('thrifty', THRIFTY_KEY, { project: 'thrifty', scopes: ['ai', 'console'] }),
    workflowIn('thrifty', 'thrifty-capped', { name: 'capped', ...cached() }),
    spendCap('thrifty-cap', { project: 'thrifty', period: 'monthly', limitUsd: '0.0001' }),
  ];
}

const ask = (content: string) => [{ role: 'user', content }];

for (const backend of ['memory', 'redis'] as const) {
  describe(`response cache (${backend} state)`, () => {
    let sim: Simulator;
    let gw: RunningGateway;
    let redis: RunningRedis | undefined;
    let clock = T0;
    const upstream = () => sim.requests().filter((r) => r.path.endsWith('/chat/completions')).length;
    const sdk = (key = API_KEY) => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: key, maxRetries: 0 });
    const entry = async (id: string, key = ADMIN_KEY): Promise<LogEntry> => {
      await gw.gateway.state.flush();
      const found = (await logs(gw.url, 'limit=200', key)).find((e) => e.request_log_id === id);
      if (!found) throw new Error(`no request log ${id}`);
      return found;
    };
    const wrapped = (
      workflowName: string,
      content: string,
      headers: Record<string, string> = {},
      key = API_KEY,
    ) =>
      fetch(`${gw.url}/v1/ai`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ workflow: workflowName, format: 'wrapped', messages: ask(content) }),
      }).then(async (r) => ({
        status: r.status,
        headers: r.headers,
        json: (await r.json()) as Wrapped & ErrBody,
      }));

    beforeAll(async () => {
      sim = await startSimulator();
      if (backend === 'redis') redis = await startRedis();
      const url = redis?.url;
      gw = await startGateway(config(sim.url), {
        now: () => clock++,
        redisUrl: url,
      });
    });
    afterAll(async () => {
      await gw?.close();
      await sim?.close();
      await redis?.stop();
    });

    it('miss, then hit: same answer, no upstream call, $0, logged with the cost it saved', async () => {
      const before = upstream();
      const a = await wrapped('faq', 'What are your opening hours?');
      expect(a.status).toBe(200);
      expect(a.headers.get('x-service-cache')).toBe('miss'); // wrapped carries raw's headers, and meta agrees
      expect(a.json.meta).toMatchObject({ cache: 'miss', used_provider: 'oai', used_model: 'gpt-4o-mini' });
      expect(upstream()).toBe(before + 1);
      const b = await wrapped('faq', 'What are your opening hours?');
      expect(b.json.meta).toMatchObject({ cache: 'hit' });
      // The same answer; `created` is the second each one was sent in.
      expect({ ...(b.json.data as object), created: 0 }).toEqual({ ...(a.json.data as object), created: 0 });
      expect(b.json.meta.usage).toEqual(a.json.meta.usage);
      expect(upstream()).toBe(before + 1);

      const miss = await entry(a.json.meta.request_log_id);
      const hit = await entry(b.json.meta.request_log_id);
      expect(miss).toMatchObject({ cache: 'miss', status: 'success' });
      expect(Number(miss.cost_usd)).toBeGreaterThan(0);
      expect(hit).toMatchObject({ cache: 'hit', status: 'success', used_provider: null });
      expect(Number(hit.cost_usd)).toBe(0);
      expect(hit.details).toEqual({ cost_saved_usd: miss.cost_usd });
    });

    it('raw format and the compatible surface (official SDK) report x-service-cache', async () => {
      const raw = () => post(gw.url, { workflow: 'faq', messages: ask('Do you ship abroad?') });
      expect((await raw()).headers.get('x-service-cache')).toBe('miss');
      expect((await raw()).headers.get('x-service-cache')).toBe('hit');
      const before = upstream();
      // Same canonical request through the compatible surface: a hit too (entries are surface-independent).
      const { data, response } = await sdk()
        .chat.completions.create({
          model: 'faq',
          messages: [{ role: 'user', content: 'Do you ship abroad?' }],
        })
        .withResponse();
      expect(response.headers.get('x-service-cache')).toBe('hit');
      expect(data.choices[0]!.message.content).toMatch(
        /^Simulated openai\/gpt-4o-mini reply: Do you ship abroad\?/,
      );
      expect(upstream()).toBe(before);
      // Different parameters are a different request.
      const other = await sdk()
        .chat.completions.create({
          model: 'faq',
          temperature: 0.3,
          messages: [{ role: 'user', content: 'Do you ship abroad?' }],
        })
        .withResponse();
      expect(other.response.headers.get('x-service-cache')).toBe('miss');
    });

    it('a streamed request that hits is replayed as SSE in the same chunk format, on both surfaces', async () => {
      const q = 'Can I return an item?';
      const live = await sdk().chat.completions.create({
        model: 'faq',
        stream: true,
        messages: ask(q) as never,
      });
      let liveText = '';
      for await (const c of live) liveText += c.choices[0]?.delta.content ?? '';
      const before = upstream();
      // Compatible SSE through the SDK.
      const replay = await sdk()
        .chat.completions.create({ model: 'faq', stream: true, messages: ask(q) as never })
        .withResponse();
      expect(replay.response.headers.get('x-service-cache')).toBe('hit');
      let replayText = '';
      let finish: string | null | undefined;
      for await (const c of replay.data) {
        expect(c.object).toBe('chat.completion.chunk');
        replayText += c.choices[0]?.delta.content ?? '';
        finish = c.choices[0]?.finish_reason ?? finish;
      }
      expect(replayText).toBe(liveText);
      expect(finish).toBe('stop');
      // Native SSE: metadata first, chunks, meta with cache hit, [DONE].
      const res = await fetch(`${gw.url}/v1/ai`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ workflow: 'faq', stream: true, messages: ask(q) }),
      });
      expect(res.headers.get('x-service-cache')).toBe('hit');
      const frames = parseSse(await res.text());
      expect(frames[0]!.event).toBe('metadata');
      const chunks = frames
        .filter((f) => f.event === undefined && f.data !== '[DONE]')
        .map((f) => JSON.parse(f.data));
      expect(chunks[0].choices[0].delta.role).toBe('assistant');
      expect(chunks.map((c) => c.choices[0].delta.content ?? '').join('')).toBe(liveText);
      const meta = JSON.parse(frames.find((f) => f.event === 'meta')!.data);
      expect(meta.cache).toBe('hit');
      expect(frames.at(-1)!.data).toBe('[DONE]');
      expect(upstream()).toBe(before);
      const log = await entry(res.headers.get('x-service-request-log-id')!);
      expect(log).toMatchObject({ cache: 'hit', stream: true });
      expect(Number(log.cost_usd)).toBe(0);
    });

    it('structured output: a hit answers the same parsed value', async () => {
      const a = await wrapped('faq-schema', 'Summarise the return policy.');
      const b = await wrapped('faq-schema', 'Summarise the return policy.');
      expect(b.json.meta.cache).toBe('hit');
      expect(b.json.data).toEqual(a.json.data);
      expect(typeof (b.json.data as { answer: unknown }).answer).toBe('string');
    });

    it('Cache-Control: no-cache skips the lookup but stores; no-store skips both', async () => {
      const before = upstream();
      const a = await wrapped('faq', 'no-cache question', { 'cache-control': 'no-cache' });
      expect(a.json.meta.cache).toBe('bypass');
      expect((await wrapped('faq', 'no-cache question')).json.meta.cache).toBe('hit');
      expect(
        (await wrapped('faq', 'no-cache question', { 'cache-control': 'no-cache' })).json.meta.cache,
      ).toBe('bypass');
      expect(upstream()).toBe(before + 2);
      expect(
        (await wrapped('faq', 'no-store question', { 'cache-control': 'no-store' })).json.meta.cache,
      ).toBe('bypass');
      expect((await wrapped('faq', 'no-store question')).json.meta.cache).toBe('miss');
      expect(upstream()).toBe(before + 4);
    });

    it('session requests always bypass', async () => {
      const a = await wrapped('faq-session', 'hello');
      const b = await wrapped('faq-session', 'hello');
      expect([a.json.meta.cache, b.json.meta.cache]).toEqual(['bypass', 'bypass']);
      expect(b.json.meta.session_id).not.toBe(a.json.meta.session_id);
    });

    it('provider failures are never cached', async () => {
      const a = await wrapped('faq-broken', 'anything');
      expect(a.json.meta).toMatchObject({ status: 'error', cache: 'miss' });
      const b = await wrapped('faq-broken', 'anything');
      expect(b.json.meta).toMatchObject({ status: 'error', cache: 'miss' });
    });

    it('never shared between projects: identical requests of two projects are two misses', async () => {
      const q = 'isolation question';
      const mine = await wrapped('faq', q);
      const theirs = await wrapped('faq', q, {}, OTHER_KEY);
      expect(mine.json.meta.cache).toBe('miss');
      expect(theirs.json.meta.cache).toBe('miss');
      expect((await wrapped('faq', q, {}, OTHER_KEY)).json.meta.cache).toBe('hit');
      const theirLog = await entry(theirs.json.meta.request_log_id, OTHER_ADMIN_KEY);
      expect(theirLog.cache).toBe('miss');
    });

    it('a hit passes an exhausted project cap at $0; a miss is refused', async () => {
      const q = (s: string) => ({ workflow: 'capped', format: 'wrapped', max_tokens: 16, messages: ask(s) });
      const key = { key: THRIFTY_KEY };
      const first = await post<Wrapped>(gw.url, q('capped question'), key);
      expect(first.status).toBe(200);
      // Spend the rest of the $0.0001 cap with other questions.
      let refused: Awaited<ReturnType<typeof post<ErrBody>>> | undefined;
      for (let i = 0; i < 10 && !refused; i++) {
        const r = await post<ErrBody>(
          gw.url,
          q(`filler ${i} with a longer text to spend the budget faster`),
          key,
        );
        if (r.status === 402) refused = r;
      }
      expect(refused?.json.error).toBeTruthy();
      const hit = await post<Wrapped>(gw.url, q('capped question'), key);
      expect(hit.status).toBe(200);
      expect(hit.json.meta.cache).toBe('hit');
      const hitLog = await entry(hit.json.meta.request_log_id, THRIFTY_KEY);
      expect(hitLog).toMatchObject({ cache: 'hit', status: 'success' });
      expect(Number(hitLog.cost_usd)).toBe(0);
      expect((await post(gw.url, q('a brand new question'), key)).status).toBe(402);
    });

    it('a changed workflow never serves its old entries', async () => {
      const q = 'invalidation question';
      await wrapped('faq', q);
      expect((await wrapped('faq', q)).json.meta.cache).toBe('hit');
      await gw.reconfigure(config(sim.url, { systemInstructions: 'Answer from the new FAQ.' }));
      expect((await wrapped('faq', q)).json.meta.cache).toBe('miss');
      // A change to the route (model), not the prompt, invalidates too.
      await gw.reconfigure(
        config(sim.url, { systemInstructions: 'Answer from the new FAQ.', model: 'slow-300' }),
      );
      expect((await wrapped('faq', q)).json.meta.cache).toBe('miss');
      await gw.reconfigure(config(sim.url));
    });

    it('exports hits, misses, bypasses and the cost saved by workflow', async () => {
      const text = await (await fetch(`${gw.metricsUrl}/metrics`)).text();
      for (const result of ['hit', 'miss', 'bypass'])
        expect(text).toMatch(
          new RegExp(
            `switchyard_cache_requests_total\\{project="team.app",workflow="faq",result="${result}"\\} [1-9]`,
          ),
        );
      expect(text).toMatch(
        /switchyard_cache_saved_usd_total\{project="team.app",workflow="faq"\} 0\.000[1-9]\d*/,
      );
    });
  });
}
