/**
 * The seeded property-based fuzz suite over every endpoint and both surfaces, with runtime state in
 * memory and on a real Redis. Whatever the request (deep nesting, extreme numbers, NUL bytes,
 * `__proto__`/`constructor` keys, wrong types, 5 MB strings, duplicate keys, hostile paths and query
 * strings, bad credentials), the gateway answers below 500 in the API's error shape for the
 * surface, keeps serving, writes one request-log entry per authenticated request on a logged
 * route (refusals included) and nothing else for a refused one. It prints its counts.
 *
 * FUZZ_SEED and FUZZ_RUNS (runs per endpoint, default 300) reproduce or widen a run.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type RunningRedis, startRedis } from '#devkit/redis';
import { FolderConsoleBackend } from '#gateway/console/index';
import { createGateway, type Gateway } from '#gateway/gateway';
import { SnapshotStore } from '#gateway/snapshot/store';
import { createRuntimeState } from '#gateway/state/index';
import { loadInto } from '../../embedded/config-source.ts';
import { API_KEY, apiKey, baseConfig, NO_AI_SCOPE_KEY, PROJECT_ID, workflow } from '../harness/manifests.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import { type Call, type Credential, type Endpoint, endpoints, PERSON } from './fuzz/endpoints.ts';
import { FIVE_MB, toJson } from './fuzz/values.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20261125);
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
const ADMIN_KEY = 'sy_live_FuzzAdminKeyWithAiAndConsole012345';
const KEYS: Record<Credential, string | undefined> = {
  ai: `Bearer ${API_KEY}`,
  admin: `Bearer ${ADMIN_KEY}`,
  console: `Bearer ${NO_AI_SCOPE_KEY}`,
  none: undefined,
  garbage: 'Bearer sy_live_NotAKeyOfAnyProjectAtAll00000000',
};
/** Pipeline channels waiting for their callback when the run starts. */
const CHANNELS = 12;

const manifests = (simUrl: string): object[] => {
  const wf = (name: string, requestType: string, spec: Record<string, unknown> = {}) =>
    workflow(name, {
      provider: 'oai',
      model: 'gpt-4o-mini',
      requestType,
      backups: [{ provider: 'claude', model: 'claude-haiku-4-5' }],
      cacheFields: ['metadata.customer_id', 'inputs.__proto__'],
      ...spec,
    });
  return [
    ...baseConfig(simUrl, ['gpt-4o-mini']),
    ...apiKey('fuzz-admin', ADMIN_KEY, { scopes: ['ai', 'console'] }),
    wf('chat-wf', 'chat'),
    wf('claude-wf', 'chat', {
      provider: 'claude',
      model: 'claude-haiku-4-5',
      backups: [{ provider: 'gem', model: 'gemini-2.5-flash' }],
    }),
    wf('gem-wf', 'chat', { provider: 'gem', model: 'gemini-2.5-flash', backups: [] }),
    wf('completion-wf', 'completion'),
    wf('image-wf', 'image', { backups: [] }),
    wf('embed-wf', 'embedding', { backups: [] }),
    wf('audio-wf', 'audio', { backups: [] }),
    wf('person-wf', 'chat', { structuredOutput: { schema: PERSON } }),
    wf('tm-wf', 'chat', { testMode: true }),
    wf('session-wf', 'chat', { testMode: true, sessionMemory: { enabled: true, ttlSeconds: 600 } }),
    wf('cache-wf', 'chat', { testMode: true, responseCache: { ttlSeconds: 600 } }),
    wf('pipeline-wf', 'chat', { testMode: true, eventName: 'review.done' }),
    wf('handmade', 'chat', { testMode: true }),
    {
      apiVersion: 'switchyard.dev/v1alpha1',
      kind: 'SpendCap',
      metadata: { name: 'roomy', namespace: 'team' },
      spec: { projectRef: { name: 'app' }, scope: 'project', period: 'monthly', limitUsd: '1000000' },
    },
  ];
};

interface Target {
  gateway: Gateway;
  url: string;
  close(): Promise<void>;
}

/** A gateway as embedded mode runs one (config folder, console writing into it), state where asked. */
async function startTarget(simUrl: string, redisUrl: string | undefined): Promise<Target> {
  const dir = await mkdtemp(join(tmpdir(), 'sy-fuzz-'));
  const sealKey = randomBytes(32);
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const store = new SnapshotStore(sealKey);
  await writeFile(
    join(dir, 'config.yaml'),
    manifests(simUrl)
      .map((m) => stringify(m))
      .join('---\n'),
  );
  const reload = () => loadInto(dir, store, sealKey, logger);
  await reload();
  const gateway = createGateway(store, {
    logger,
    console: new FolderConsoleBackend({ dir, reload }),
    async: { simulatedBackendMs: 3_600_000 },
    ...(redisUrl
      ? {
          state: (metrics, log) =>
            createRuntimeState({ redis: { url: redisUrl }, registry: metrics.registry, logger: log }),
        }
      : {}),
  });
  await (gateway.state as { whenReady?: () => Promise<void> }).whenReady?.();
  const { url } = await gateway.listen('127.0.0.1', 0, 0);
  return {
    gateway,
    url,
    async close() {
      await gateway.close(1000);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

interface Reply {
  status: number;
  contentType: string;
  text: string;
  json: unknown;
}

async function send(url: string, c: Call): Promise<Reply> {
  const headers: Record<string, string> = {};
  const auth = KEYS[c.credential];
  if (auth) headers.authorization = auth;
  let body: RequestInit['body'];
  if (c.form) {
    const form = new FormData();
    for (const [k, v] of Object.entries(c.form.fields)) form.append(k, v);
    if (c.form.file) form.append('file', new Blob([c.form.file]), 'a.mp3');
    body = form;
  } else if (c.body !== undefined && c.method !== 'GET') {
    headers['content-type'] = c.contentType ?? 'application/json';
    body = c.body;
  }
  const res = await fetch(`${url}${c.path}`, {
    method: c.method,
    headers,
    body,
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', text, json };
}

const isString = (v: unknown): v is string => typeof v === 'string';
const nativeShape = (j: unknown): boolean => {
  const e = j as Record<string, unknown> | undefined;
  return (
    !!e &&
    isString(e.error) &&
    isString(e.message) &&
    (e.hint === undefined || isString(e.hint)) &&
    (e.param === undefined || isString(e.param))
  );
};
const compatShape = (j: unknown): boolean => {
  const e = (j as { error?: Record<string, unknown> } | undefined)?.error;
  return (
    !!e &&
    typeof e === 'object' &&
    isString(e.message) &&
    isString(e.type) &&
    (e.param === null || isString(e.param)) &&
    (e.code === null || isString(e.code))
  );
};
const messagesShape = (j: unknown): boolean => {
  const e = j as { type?: unknown; error?: Record<string, unknown> } | undefined;
  return !!e && e.type === 'error' && !!e.error && isString(e.error.type) && isString(e.error.message);
};

/** The invariant of every single answer. */
function expectSane(ep: Endpoint, c: Call, r: Reply): void {
  const what = `${ep.name}: ${c.method} ${c.path.slice(0, 120)} [${c.credential}] ${(c.body ?? '').slice(0, 200)} → ${r.status} ${r.text.slice(0, 300)}`;
  expect(r.status, what).toBeLessThan(500);
  expect(r.status, what).toBeGreaterThanOrEqual(200);
  if (r.status < 400) return;
  expect(r.contentType, what).toMatch(/^application\/json/);
  const shaped =
    ep.surface === 'native'
      ? nativeShape(r.json)
      : ep.surface === 'compat'
        ? compatShape(r.json)
        : ep.surface === 'messages'
          ? messagesShape(r.json)
          : nativeShape(r.json) || compatShape(r.json) || messagesShape(r.json);
  expect(shaped, what).toBe(true);
}

interface Tally {
  requests: number;
  byStatus: Map<number, number>;
  logged: number;
  accepted: number;
  /** Background responses accepted (POST /v1/responses with background): their job logs an entry too. */
  background: number;
  consoleNames: Set<string>;
  /** `METHOD path status` of each request expected in the request log, for a mismatch report. */
  expectedKeys: string[];
}

const tallyOf = (): Tally => ({
  requests: 0,
  byStatus: new Map(),
  logged: 0,
  accepted: 0,
  background: 0,
  consoleNames: new Set(),
  expectedKeys: [],
});

/** What an answer changes that the end-of-run checks expect. */
function isBackground(body: string | undefined): boolean {
  try {
    return (JSON.parse(body ?? '') as { background?: unknown } | null)?.background === true;
  } catch {
    return false;
  }
}

function account(t: Tally, ep: Endpoint, c: Call, r: Reply): void {
  t.requests++;
  t.byStatus.set(r.status, (t.byStatus.get(r.status) ?? 0) + 1);
  const authenticated = c.credential === 'ai' || c.credential === 'admin' || c.credential === 'console';
  const routed = !(
    r.status === 414 ||
    (r.status === 400 && (r.json as { message?: string })?.message?.startsWith('The URL is not valid'))
  );
  if (ep.logged && authenticated && routed) {
    t.logged++;
    t.expectedKeys.push(`${c.method} ${c.path.split('?')[0]} ${r.status}`);
  }
  if (c.path.endsWith('/ai/async') && r.status === 202) t.accepted++;
  if (c.path.endsWith('/responses') && r.status === 200 && isBackground(c.body)) t.background++;
  if (c.path.startsWith('/api/console/projects/team.app/workflows')) {
    const name =
      c.method === 'POST'
        ? (r.json as { name?: string })?.name
        : decodeURIComponent(c.path.split('/').pop() ?? '');
    if (c.method === 'POST' && (r.status === 201 || r.status === 202) && name) t.consoleNames.add(name);
    if (c.method === 'DELETE' && r.status === 204) t.consoleNames.delete(name ?? '');
  }
}

async function allEntries(url: string): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  let cursor: string | null = null;
  do {
    const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
    const page = (await (
      await fetch(`${url}/v1/request-logs?limit=500${q}`, {
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      })
    ).json()) as { data: Record<string, unknown>[]; next_cursor: string | null };
    out.push(...page.data);
    cursor = page.next_cursor;
  } while (cursor);
  return out;
}

for (const backend of ['memory', 'redis'] as const) {
  describe(`fuzzing every endpoint (state: ${backend}, seed ${SEED})`, () => {
    let sim: Simulator;
    let redis: RunningRedis | undefined;
    let target: Target;
    const channels: string[] = [];
    const tally = tallyOf();
    let started = 0;

    beforeAll(async () => {
      started = performance.now();
      sim = await startSimulator();
      if (backend === 'redis') redis = await startRedis();
      target = await startTarget(sim.url, redis?.url);
      // Pipeline channels awaiting their callback, for the callback endpoint to hit.
      for (let i = 0; i < CHANNELS; i++) {
        const r = await send(target.url, {
          method: 'POST',
          path: '/v1/ai/async',
          body: JSON.stringify({ workflow: 'pipeline-wf', messages: [{ role: 'user', content: `c${i}` }] }),
          credential: 'ai',
        });
        expect(r.status).toBe(202);
        channels.push((r.json as { channel_id: string }).channel_id);
      }
      tally.logged += CHANNELS;
      tally.accepted += CHANNELS;
    }, 60_000);
    afterAll(async () => {
      await target?.close();
      await sim?.close();
      await redis?.stop();
    });

    for (const ep of endpoints(RUNS, () => channels)) {
      it(ep.name, async () => {
        await fc.assert(
          fc.asyncProperty(ep.call, async (c) => {
            const r = await send(target.url, c);
            expectSane(ep, c, r);
            account(tally, ep, c, r);
          }),
          { seed: SEED, numRuns: ep.runs, endOnFailure: true },
        );
      }, 120_000);
    }

    it('5 MB strings in every string field of a valid body: answered below 500 in the surface’s shape', async () => {
      const fields = [
        'workflow',
        'model',
        'provider',
        'prompt',
        'input',
        'session_id',
        'user',
        'file',
        'voice',
      ];
      for (const [path, base, surface] of [
        ['/v1/ai', { workflow: 'tm-wf', messages: [{ role: 'user', content: 'hi' }] }, 'native'],
        ['/v1/chat/completions', { model: 'chat-wf', messages: [{ role: 'user', content: 'hi' }] }, 'compat'],
        ['/v1/completions', { model: 'completion-wf', prompt: 'hi' }, 'compat'],
      ] as const) {
        for (const field of [...fields, 'content']) {
          const body =
            field === 'content'
              ? toJson({ ...base, messages: [{ role: 'user', content: FIVE_MB }] })
              : toJson({ ...base, [field]: FIVE_MB });
          const ep: Endpoint = {
            name: `5 MB ${field}`,
            surface,
            logged: true,
            runs: 1,
            call: fc.constant({} as Call),
          };
          const c: Call = { method: 'POST', path, body, credential: 'ai' };
          const r = await send(target.url, c);
          expectSane(ep, c, r);
          account(tally, ep, c, r);
        }
      }
    }, 120_000);

    it('afterwards: alive, unpolluted, one log entry per authenticated request, nothing written for refusals', async () => {
      const alive = await send(target.url, {
        method: 'POST',
        path: '/v1/ai',
        body: JSON.stringify({ workflow: 'chat-wf', messages: [{ role: 'user', content: 'still there?' }] }),
        credential: 'ai',
      });
      expect(alive.status).toBe(200);
      tally.logged++;
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(Object.prototype).not.toHaveProperty('polluted');

      // Accepted async requests add their job's entry once the job has run.
      const expected = tally.logged + tally.accepted + tally.background;
      let entries: Record<string, unknown>[] = [];
      const deadline = Date.now() + 20_000;
      do {
        await target.gateway.state.flush();
        entries = await allEntries(target.url);
        if (entries.length >= expected) break;
        await new Promise((r) => setTimeout(r, 100));
      } while (Date.now() < deadline);
      const refused = entries.filter((e) => (e.http_status as number) >= 400);
      const consumed = refused.filter((e) => e.used_provider !== null || e.usage !== null);

      const usage = (await (
        await fetch(`${target.url}/v1/usage?group_by=workflow`, {
          headers: { authorization: `Bearer ${ADMIN_KEY}` },
        })
      ).json()) as { totals: { requests: number } };
      const paid = entries.filter((e) => e.used_provider !== null && e.usage !== null).length;

      const listed = (await (
        await fetch(`${target.url}/api/console/projects/${PROJECT_ID}/workflows`, {
          headers: { authorization: `Bearer ${ADMIN_KEY}` },
        })
      ).json()) as { data: { name: string; managed_by_console: boolean }[] };
      const consoleNames = listed.data
        .filter((w) => w.managed_by_console)
        .map((w) => w.name)
        .sort();

      let channelKeys: number | undefined;
      if (redis) {
        const probe = new Redis(redis.url);
        channelKeys = 0;
        let cursor = '0';
        do {
          const [next, keys] = await probe.scan(
            cursor,
            'MATCH',
            `switchyard:{p:${PROJECT_ID}}:async:ch:*`,
            'COUNT',
            1000,
          );
          channelKeys += keys.length;
          cursor = next;
        } while (cursor !== '0');
        probe.disconnect();
      }

      const statuses = [...tally.byStatus.entries()]
        .sort(([a], [b]) => a - b)
        .map(([s, n]) => `${s}×${n}`)
        .join(' ');
      console.log(
        `[fuzz ${backend}] seed ${SEED}, ${RUNS} runs per endpoint: ${tally.requests} requests in ` +
          `${((performance.now() - started) / 1000).toFixed(1)} s; statuses ${statuses}; 5xx: ${[...tally.byStatus.keys()].filter((s) => s >= 500).length}`,
      );
      console.log(
        `[fuzz ${backend}] request-log entries ${entries.length} (expected ${expected}: ${tally.logged} authenticated requests on logged routes + ${tally.accepted} async jobs + ${tally.background} background responses); ` +
          `refused ${refused.length}, of which with provider use or usage ${consumed.length}; usage requests ${usage.totals.requests} = paid entries ${paid}; ` +
          `console workflows ${consoleNames.length} (expected ${tally.consoleNames.size})` +
          (channelKeys === undefined
            ? ''
            : `; async channels in Redis ${channelKeys} (accepted ${tally.accepted})`),
      );
      if (entries.length !== expected) {
        const seen = new Map<string, number>();
        for (const e of entries) {
          const k = `${e.method} ${e.path} ${e.http_status}`;
          seen.set(k, (seen.get(k) ?? 0) + 1);
        }
        const missing = tally.expectedKeys.filter((k) => {
          const n = seen.get(k) ?? 0;
          if (n > 0) seen.set(k, n - 1);
          return n === 0;
        });
        console.log(`[fuzz ${backend}] expected but not in the request log:`, missing.slice(0, 20));
      }
      expect(entries.length).toBe(expected);
      expect(consumed).toEqual([]);
      expect(usage.totals.requests).toBe(paid);
      expect(consoleNames).toEqual([...tally.consoleNames].sort());
      if (channelKeys !== undefined) expect(channelKeys).toBe(tally.accepted);
    }, 60_000);
  });
}
