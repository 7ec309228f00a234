import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningRedis, startRedis } from '#devkit/redis';
import { type RunningGateway, startGateway } from '../../harness/gateway.ts';
import { API_KEY, apiKey, baseConfig, OTHER_KEY, provider, workflow } from '../../harness/manifests.ts';
import { type Simulator, startSimulator } from '../../simulator/index.ts';
import { type ErrBody, post, type Wrapped } from '../native/helpers.ts';

/**
 * Request logs and usage, end to end: traffic through both surfaces (native sync, native SSE,
 * compatible JSON via the official SDK, compatible SSE, failures, refusals), then read back
 * through GET /v1/request-logs and GET /v1/usage, on the memory adapter and on a real Redis.
 */

const ADMIN_KEY = 'sy_live_AdminKeyWithAiAndConsole0123456789';
const OTHER_ADMIN_KEY = 'sy_live_OtherProjectConsoleKey0123456789ab';
// 10:15 UTC: every request of the run lands in the 10:00 hour bucket.
const T0 = Date.parse('2026-11-23T10:15:00.000Z');

interface Entry {
  request_log_id: string;
  type: string;
  time: string;
  project_id: string;
  api_key_id: string | null;
  surface: string;
  workflow: string | null;
  status: string;
  outcome: string;
  http_status: number;
  error_code: string | null;
  used_provider: string | null;
  used_model: string | null;
  attempts: { provider: string; status: string }[];
  usage: { prompt_tokens: number; completion_tokens?: number; total_tokens: number } | null;
  cost_usd: string | null;
  stream: boolean;
  customer_data: Record<string, unknown>;
  test_mode: boolean;
  ttft_ms: number | null;
}
interface LogList {
  object: string;
  data: Entry[];
  next_cursor: string | null;
  has_more: boolean;
}
interface UsageRow {
  period_start: string;
  workflow: string | null;
  provider: string | null;
  model: string | null;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost_usd: string | null;
  unpriced_requests: number;
}
interface UsageReport {
  object: string;
  data: UsageRow[];
  totals: Omit<UsageRow, 'period_start' | 'workflow' | 'provider' | 'model'>;
}

async function get<T>(url: string, path: string, key = ADMIN_KEY): Promise<{ status: number; json: T }> {
  const res = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, json: (await res.json()) as T };
}

function config(simUrl: string) {
  return [
    ...baseConfig(simUrl),
    ...apiKey('admin', ADMIN_KEY, { scopes: ['ai', 'console'] }),
    ...apiKey('other-admin', OTHER_ADMIN_KEY, { project: 'other', scopes: ['ai', 'console'] }),
    // Priced at 1 $/MTok in, 2 $/MTok out (manifests.ts); `free` has no pricing at all.
    ...provider('free', 'openai', simUrl, ['gpt-4o-mini']).map((o) =>
      'spec' in o
        ? { ...o, spec: { ...o.spec, models: [{ name: 'gpt-4o-mini', requestTypes: ['chat'] }] } }
        : o,
    ),
    workflow('support', { provider: 'oai', model: 'gpt-4o-mini', cacheFields: ['metadata.customer_id'] }),
    workflow('broken', { provider: 'oai', model: 'fail-503' }),
    workflow('unpriced', { provider: 'free', model: 'gpt-4o-mini' }),
  ];
}

for (const backend of ['memory', 'redis'] as const) {
  describe(`request logs and usage (${backend} state)`, () => {
    let sim: Simulator;
    let gw: RunningGateway;
    let redis: RunningRedis | undefined;
    let clock = T0;
    const answers: { id: string; usage?: { prompt_tokens: number; completion_tokens: number } }[] = [];

    beforeAll(async () => {
      sim = await startSimulator();
      if (backend === 'redis') redis = await startRedis();
      const url = redis?.url;
      gw = await startGateway(config(sim.url), {
        now: () => clock++,
        redisUrl: url,
      });

      // 1. native sync, wrapped, with a cache field
      const a = await post<Wrapped>(gw.url, {
        workflow: 'support',
        format: 'wrapped',
        metadata: { customer_id: 'c-42' },
        messages: [{ role: 'user', content: 'Where is my order?' }],
      });
      expect(a.status).toBe(200);
      answers.push({ id: a.json.meta.request_log_id, usage: a.json.meta.usage as never });
      // 2. native SSE
      const s = await fetch(`${gw.url}/v1/ai`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          workflow: 'support',
          stream: true,
          messages: [{ role: 'user', content: 'hi' }],
        }),
      });
      await s.text();
      answers.push({ id: s.headers.get('x-service-request-log-id')! });
      // 3. compatible JSON through the official SDK
      const sdk = new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: API_KEY, maxRetries: 0 });
      const { data: c, response } = await sdk.chat.completions
        .create({ model: 'support', messages: [{ role: 'user', content: 'hello' }] })
        .withResponse();
      answers.push({ id: response.headers.get('x-service-request-log-id')!, usage: c.usage as never });
      // 4. compatible SSE with usage
      const stream = await sdk.chat.completions.create({
        model: 'support',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'stream please' }],
      });
      for await (const _ of stream) void _;
      // 5. provider failure on the native surface (HTTP 200, wrapped error)
      const f = await post<Wrapped>(gw.url, {
        workflow: 'broken',
        messages: [{ role: 'user', content: 'x' }],
      });
      expect(f.json.meta.status).toBe('error');
      // 6. client error after authentication (compat 404 model_not_found)
      await expect(
        sdk.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] }),
      ).rejects.toBeInstanceOf(OpenAI.NotFoundError);
      // 7. native 400
      const bad = await post<ErrBody>(gw.url, { workflow: 'support', messages: [], temperature: 5 });
      expect(bad.status).toBe(400);
      // 8. a model without pricing
      await post(gw.url, { workflow: 'unpriced', messages: [{ role: 'user', content: 'x' }] });
      // 9. unauthenticated: no project, no entry
      expect((await post(gw.url, { workflow: 'support' }, { key: null })).status).toBe(401);
      // 10. the other project's traffic
      await post(
        gw.url,
        { workflow: 'missing', messages: [{ role: 'user', content: 'x' }] },
        { key: OTHER_KEY },
      );
      await gw.gateway.state.flush();
    });

    afterAll(async () => {
      await gw?.close();
      await sim?.close();
      await redis?.stop();
    });

    it('has one entry per request after authentication, newest first, with the documented fields', async () => {
      const r = await get<LogList>(gw.url, '/v1/request-logs?limit=100');
      expect(r.status).toBe(200);
      expect(r.json.object).toBe('list');
      expect(r.json.data).toHaveLength(8);
      const times = r.json.data.map((e) => e.time);
      expect([...times].sort().reverse()).toEqual(times);
      expect(r.json.data.every((e) => e.project_id === 'team.app' && e.type === 'request')).toBe(true);
      const first = r.json.data.find((e) => e.request_log_id === answers[0]!.id)!;
      expect(first).toMatchObject({
        surface: 'native',
        workflow: 'support',
        status: 'success',
        outcome: 'success',
        http_status: 200,
        used_provider: 'oai',
        used_model: 'gpt-4o-mini',
        customer_data: { 'metadata.customer_id': 'c-42' },
        api_key_id: 'team/main',
        stream: false,
        test_mode: false,
        error_code: null,
      });
      expect(first.usage?.prompt_tokens).toBe(answers[0]!.usage!.prompt_tokens);
      const u = first.usage!;
      // 1 $/MTok in, 2 $/MTok out, rounded up to the micro-dollar.
      const micros = Math.ceil(u.prompt_tokens + 2 * (u.completion_tokens ?? 0));
      expect(first.cost_usd).toBe((micros / 1e6).toFixed(6).replace(/0{1,4}$/, ''));
      // Never the key, never message bodies.
      const raw = JSON.stringify(r.json);
      expect(raw).not.toContain(API_KEY);
      expect(raw).not.toContain('Where is my order?');
    });

    it('records streams with their usage and time to first token', async () => {
      const { json } = await get<LogList>(gw.url, '/v1/request-logs?limit=100');
      const native = json.data.find((e) => e.request_log_id === answers[1]!.id)!;
      expect(native).toMatchObject({ surface: 'native', stream: true, status: 'success' });
      expect(native.ttft_ms).toBeGreaterThan(0);
      const compatStream = json.data.filter((e) => e.surface === 'compat' && e.stream);
      expect(compatStream).toHaveLength(1);
      expect(compatStream[0]!.usage?.total_tokens).toBeGreaterThan(0);
    });

    it('records provider failures, client errors and unpriced models', async () => {
      const { json } = await get<LogList>(gw.url, '/v1/request-logs?status=error&limit=100');
      expect(json.data.map((e) => e.outcome).sort()).toEqual([
        'client_error',
        'client_error',
        'upstream_error',
      ]);
      const failed = json.data.find((e) => e.outcome === 'upstream_error')!;
      expect(failed).toMatchObject({ workflow: 'broken', http_status: 200, cost_usd: '0.00' });
      expect(failed.attempts[0]).toMatchObject({ provider: 'oai', status: 'error' });
      const notFound = json.data.find((e) => e.surface === 'compat')!;
      expect(notFound).toMatchObject({ http_status: 404, error_code: 'workflow_not_found' });
      const unpriced = (await get<LogList>(gw.url, '/v1/request-logs?workflow=unpriced')).json.data;
      expect(unpriced).toHaveLength(1);
      expect(unpriced[0]!.cost_usd).toBeNull();
    });

    it('filters by workflow, status, surface-independent time range, and pages with a cursor', async () => {
      const support = (await get<LogList>(gw.url, '/v1/request-logs?workflow=support&limit=100')).json;
      expect(support.data).toHaveLength(4);
      const all = (await get<LogList>(gw.url, '/v1/request-logs?limit=100')).json.data;
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const q: string = `/v1/request-logs?limit=3${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
        const page: LogList = (await get<LogList>(gw.url, q)).json;
        expect(page.data.length).toBeLessThanOrEqual(3);
        seen.push(...page.data.map((e) => e.request_log_id));
        cursor = page.next_cursor;
        pages++;
      } while (cursor && pages < 10);
      expect(seen).toEqual(all.map((e) => e.request_log_id));
      const mid = all[3]!.time;
      const older = (await get<LogList>(gw.url, `/v1/request-logs?to=${encodeURIComponent(mid)}&limit=100`))
        .json;
      expect(older.data.map((e) => e.request_log_id)).toEqual(all.slice(3).map((e) => e.request_log_id));
    });

    it('answers bad filters with 400 naming the parameter, and refuses keys without the console scope', async () => {
      const cases: [string, string][] = [
        ['status=maybe', 'status'],
        ['limit=0', 'limit'],
        ['limit=abc', 'limit'],
        ['from=yesterday', 'from'],
        ['session_id=not-a-uuid', 'session_id'],
        ['cursor=garbage', 'cursor'],
        ['colour=blue', 'colour'],
        ['type=nope', 'type'],
      ];
      for (const [q, param] of cases) {
        const r = await get<ErrBody>(gw.url, `/v1/request-logs?${q}`);
        expect(r.status, q).toBe(400);
        expect(r.json.param, q).toBe(param);
      }
      const denied = await get<ErrBody>(gw.url, '/v1/request-logs', API_KEY);
      expect(denied.status).toBe(403);
      expect(denied.json.error).toBe('insufficient_permission');
      expect((await get<ErrBody>(gw.url, '/api/v1/usage?granularity=week')).json.param).toBe('granularity');
    });

    it("never shows another project's entries", async () => {
      const other = (await get<LogList>(gw.url, '/v1/request-logs?limit=100', OTHER_ADMIN_KEY)).json;
      expect(other.data).toHaveLength(1);
      expect(other.data[0]).toMatchObject({ project_id: 'team.other', error_code: 'workflow_not_found' });
      const ours = new Set(answers.map((a) => a.id));
      expect(other.data.some((e) => ours.has(e.request_log_id))).toBe(false);
      const usage = (
        await get<UsageReport>(
          gw.url,
          `/v1/usage?from=${T0 - 3_600_000}&to=${T0 + 3_600_000}`,
          OTHER_ADMIN_KEY,
        )
      ).json;
      expect(usage.data).toEqual([]);
    });

    it('reports usage by workflow and by model, per hour and per day, with unknown cost as unknown', async () => {
      const range = `from=${new Date(T0 - 3_600_000).toISOString()}&to=${new Date(T0 + 3_600_000).toISOString()}`;
      const byWf = (
        await get<UsageReport>(gw.url, `/api/v1/usage?${range}&group_by=workflow&granularity=hour`)
      ).json;
      const support = byWf.data.find((r) => r.workflow === 'support')!;
      expect(support.period_start).toBe('2026-11-23T10:00:00.000Z');
      expect(support.requests).toBe(4);
      const logs = (await get<LogList>(gw.url, '/v1/request-logs?workflow=support&limit=100')).json.data;
      const sum = (k: 'prompt_tokens' | 'total_tokens') => logs.reduce((n, e) => n + (e.usage?.[k] ?? 0), 0);
      expect(support.prompt_tokens).toBe(sum('prompt_tokens'));
      expect(support.total_tokens).toBe(sum('total_tokens'));
      expect(support.unpriced_requests).toBe(0);
      const unpriced = byWf.data.find((r) => r.workflow === 'unpriced')!;
      expect(unpriced).toMatchObject({ requests: 1, cost_usd: null, unpriced_requests: 1 });
      expect(byWf.data.some((r) => r.workflow === 'broken')).toBe(false);
      expect(byWf.totals.requests).toBe(5);
      expect(byWf.totals.unpriced_requests).toBe(1);

      const byModel = (await get<UsageReport>(gw.url, `/v1/usage?${range}&group_by=model&granularity=day`))
        .json;
      expect(byModel.data.map((r) => `${r.provider}/${r.model}@${r.period_start}`).sort()).toEqual([
        'free/gpt-4o-mini@2026-11-23T00:00:00.000Z',
        'oai/gpt-4o-mini@2026-11-23T00:00:00.000Z',
      ]);
      expect(byModel.data.find((r) => r.provider === 'oai')!.cost_usd).toBe(support.cost_usd);
    });

    it('keeps bodies only for a project that opts in', async () => {
      const { json } = await get<LogList>(gw.url, '/v1/request-logs?limit=100');
      expect(json.data.some((e) => 'bodies' in e)).toBe(false);
      await gw.reconfigure(
        config(sim.url).map((o) =>
          o.kind === 'Project' && o.metadata.name === 'app'
            ? { ...o, spec: { requestLogs: { bodies: true, maxEntries: 1000 } } }
            : o,
        ),
      );
      const r = await post<Wrapped>(gw.url, {
        workflow: 'support',
        format: 'wrapped',
        messages: [{ role: 'user', content: 'keep this body' }],
      });
      await gw.gateway.state.flush();
      const logged = (await get<LogList>(gw.url, '/v1/request-logs?limit=1')).json.data[0] as Entry & {
        bodies: { request: { messages: { content: string }[] }; response: { content: string } };
      };
      expect(logged.request_log_id).toBe(r.json.meta.request_log_id);
      expect(logged.bodies.request.messages[0]!.content).toBe('keep this body');
      expect(logged.bodies.response.content).toBe(
        (r.json.data as { choices: { message: { content: string } }[] }).choices[0]!.message.content,
      );
      await gw.reconfigure(config(sim.url));
    });
  });
}
