import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { authenticate } from '#gateway/auth/authenticate';
import { responseCache } from '#gateway/cache/feature';
import { MemoryCacheStore } from '#gateway/cache/memory-store';
import { GatewayError } from '#gateway/errors/index';
import { type Exchange, type ExchangeInit, openExchange } from '#gateway/pipeline/exchange';
import type { Feature } from '#gateway/pipeline/feature';
import type { Finished } from '#gateway/pipeline/finished';
import { prepare } from '#gateway/pipeline/prepare';
import type { PipelineResult, StreamEnd } from '#gateway/pipeline/result';
import { Pipeline, type PipelineRequest } from '#gateway/pipeline/run';
import { MemorySessionStore, sessionMemory } from '#gateway/sessions/index';
import type { Runtime } from '#gateway/snapshot/runtime';
import { SnapshotStore } from '#gateway/snapshot/store';
import { estimate } from '#gateway/spend/estimate';
import { limitsAndCaps } from '#gateway/spend/feature';
import { MemoryGuardStore } from '#gateway/spend/memory-store';
import { capRef, capsOf } from '#gateway/spend/rules';
import { NO_TRACE } from '#gateway/tracing/off';
import { loadInto } from '../../embedded/config-source.ts';
import { apiKey, NS, project } from '../harness/manifests.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import { pricedProvider, spendCap, workflowOf } from '../spend/manifests.ts';

/**
 * The feature composition, below HTTP: the real features (limits and caps, response cache, session
 * memory) on in-memory stores and an injected clock, composed into a Pipeline, against the provider
 * simulator as the scripted upstream. Every failure point gives back what admission reserved; the
 * order of the features that do not depend on each other (cache, sessions) changes no result.
 */

const KEY = 'sy_live_CompositionSuiteKey0123456789abcdef';
const TIGHT_KEY = 'sy_live_CompositionTightKey0123456789abcd';
const MODEL = 'gpt-4o-mini';
const LONG = 'long-chunks-40';

function manifests(simUrl: string): object[] {
  return [
    ...pricedProvider('sim', simUrl, MODEL, { in: 1, out: 2, maxOutputTokens: 200 }),
    ...pricedProvider('small', simUrl, LONG, { in: 1, out: 2, maxOutputTokens: 5 }),
    ...pricedProvider('slow', simUrl, 'slow-2000', { in: 1, out: 2, maxOutputTokens: 200 }),
    project('app', { rateLimit: { requestsPerMinute: 1000, tokensPerMinute: 100_000 } }),
    ...apiKey('main', KEY, { project: 'app' }),
    spendCap('app-monthly', { project: 'app', period: 'monthly', limitUsd: '5' }),
    workflowOf('app', 'capped', {
      provider: 'sim',
      model: MODEL,
      backups: [{ provider: 'sim', model: MODEL }],
    }),
    spendCap('capped-primary', { project: 'app', workflow: 'capped', period: 'daily', limitUsd: '1' }),
    workflowOf('app', 'memory', { provider: 'sim', model: MODEL, sessionMemory: { enabled: true } }),
    spendCap('memory-primary', { project: 'app', workflow: 'memory', period: 'daily', limitUsd: '1' }),
    workflowOf('app', 'cached', { provider: 'sim', model: MODEL, responseCache: { ttlSeconds: 600 } }),
    workflowOf('app', 'streamy', { provider: 'small', model: LONG }),
    // The first reservation (~20 µUSD) and one 10 µUSD block pass below 25 µUSD; the next is refused.
    spendCap('streamy-primary', {
      project: 'app',
      workflow: 'streamy',
      period: 'daily',
      limitUsd: '0.000025',
    }),
    workflowOf('app', 'slow', { provider: 'slow', model: 'slow-2000' }),
    spendCap('slow-primary', { project: 'app', workflow: 'slow', period: 'daily', limitUsd: '1' }),
    project('tight'),
    ...apiKey('tight', TIGHT_KEY, { project: 'tight' }),
    spendCap('tight-monthly', { project: 'tight', period: 'monthly', limitUsd: '0.001' }),
    workflowOf('tight', 'tight-cached', {
      provider: 'sim',
      model: MODEL,
      responseCache: { ttlSeconds: 600 },
    }),
  ];
}

async function compile(list: readonly object[]): Promise<{ runtime: Runtime; dir: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-composition-'));
  await writeFile(join(dir, 'config.yaml'), list.map((m) => stringify(m)).join('---\n'));
  const sealKey = randomBytes(32);
  const store = new SnapshotStore(sealKey);
  await loadInto(dir, store, sealKey, pino({ level: 'silent' }));
  if (!store.current) throw new Error('no snapshot');
  return { runtime: store.current, dir };
}

/** A gateway's features on memory stores, composed in `order`, plus what the tests read back. */
function compose(
  order: readonly ('cache' | 'sessions')[],
  now: () => number,
  shared?: { guard: MemoryGuardStore; member: string },
) {
  const logger = pino({ level: 'silent' });
  const registry = new Registry();
  const guard = shared?.guard ?? new MemoryGuardStore(now);
  const settled: Finished[] = [];
  const limits = limitsAndCaps({
    store: guard,
    registry,
    logger,
    now,
    thresholds: { log: () => {}, emit: () => {} },
    member: shared?.member ?? 'pod-a',
  });
  const summaries = new Pipeline([limits], logger);
  const sessions = sessionMemory({
    store: new MemorySessionStore(now),
    registry,
    logger,
    now,
    summaries: { call: (ex, p) => summaries.call(ex, p), settle: (f) => settled.push(f) },
  });
  const cache = responseCache({ store: new MemoryCacheStore(now), registry, logger, now });
  const byName: Record<'cache' | 'sessions', Feature> = { cache, sessions };
  const features = [limits, ...order.map((n) => byName[n])];
  return {
    pipeline: new Pipeline(features, logger),
    summaries,
    guard,
    sessions,
    settled,
    /**
     * The pod gives its leases back (shutdown): what it still commits is what its requests in flight
     * hold, which is what the tests then read from the store.
     */
    release: async () => {
      await limits.close();
      for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    },
  };
}

type Composed = ReturnType<typeof compose>;

describe('feature composition (memory stores, provider simulator)', () => {
  let sim: Simulator;
  let runtime: Runtime;
  let dir: string;
  const clock = Date.parse('2026-11-25T12:00:00Z');
  const now = () => clock;

  beforeAll(async () => {
    sim = await startSimulator();
    ({ runtime, dir } = await compile(manifests(sim.url)));
  });
  afterAll(async () => {
    await sim?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const auth = (key = KEY) => authenticate(`Bearer ${key}`, runtime, now());
  let seq = 0;
  const exchange = (kind: Exchange['kind'], opts: Partial<ExchangeInit> = {}): Exchange =>
    openExchange({
      id: `ex-${++seq}`,
      kind,
      surface: kind === 'job' ? 'async' : kind === 'summary' ? 'internal' : 'native',
      auth: opts.auth ?? auth(),
      signal: opts.signal ?? new AbortController().signal,
      trace: NO_TRACE,
      ...opts,
    });
  const ask = (workflow: string, extra: Record<string, unknown> = {}, stream = false): PipelineRequest => ({
    body: {
      workflow,
      messages: [{ role: 'user', content: 'Where is my order?' }],
      ...extra,
    } as PipelineRequest['body'],
    stream,
  });
  /** The cap's key in the current period. */
  const capKey = (projectId: string, capId: string): string => {
    const p = runtime.projects.get(projectId)!;
    const caps = capsOf(p.config);
    const rule = [...caps.project, ...[...caps.slots.values()].flatMap((m) => [...m.values()].flat())].find(
      (r) => r.config.id === capId,
    );
    if (!rule) throw new Error(`no cap ${capId}`);
    return capRef(projectId, rule, now()).key;
  };
  const APP = `${NS}.app`;
  const PROJECT_CAP = () => capKey(APP, `${NS}/app-monthly`);
  /** Lets the leases' report (one call at the end of the event-loop turn) reach the store. */
  const settledTick = async () => {
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
  };
  /** Remaining tokens of the project's token limit after one more admitted request. */
  const remainingTokens = async (c: Composed): Promise<string | undefined> => {
    const r = await c.pipeline.run(exchange('request'), ask('capped'));
    return r.notes.rateLimitHeaders?.['x-ratelimit-remaining-tokens'];
  };

  it('a feature refusing after admission (an unknown session) gives back caps and token units', async () => {
    const c = compose(['cache', 'sessions'], now);
    const r = await c.pipeline.run(
      exchange('request'),
      ask('memory', { session_id: '00000000-0000-4000-8000-000000000000' }),
    );
    expect(r.kind).toBe('refused');
    if (r.kind === 'refused') expect(r.error.code).toBe('session_not_found');
    await c.release();
    expect(c.guard.committed(PROJECT_CAP())).toBe(0);
    expect(c.guard.committed(capKey(APP, `${NS}/memory-primary`))).toBe(0);
    expect(c.guard.spent(PROJECT_CAP())).toBe(0);
    // The next request sees the token limit as if the refused one had never come.
    const fresh = compose(['cache', 'sessions'], now);
    expect(await remainingTokens(c)).toBe(await remainingTokens(fresh));
  });

  it('a stream the cap cannot extend ends refused, and settles what it reserved', async () => {
    const c = compose(['cache', 'sessions'], now);
    const r = await c.pipeline.run(exchange('request'), ask('streamy', {}, true));
    expect(r.kind).toBe('streaming');
    if (r.kind !== 'streaming') return;
    let events = 0;
    let step = await r.events.next();
    while (!step.done) {
      events++;
      step = await r.events.next();
    }
    const end = step.value;
    expect(end.ok).toBe(false);
    if (!end.ok)
      expect(end.failure.refusal).toEqual({ code: 'workflow_budget_exceeded', type: 'budget_exceeded' });
    expect(await r.ended).toBe(end);
    await c.release();
    const slotKey = capKey(APP, `${NS}/streamy-primary`);
    expect(c.guard.committed(slotKey)).toBe(0);
    expect(c.guard.committed(PROJECT_CAP())).toBe(0);
    // No usage came before the stop: what was held counts, over the cap by less than the request's
    // own estimate (its reservation before it streamed: prompt ceiling plus maxOutputTokens).
    const ex = exchange('request');
    const p = prepare(ex.auth, ask('streamy').body, { async: false });
    const reserved = estimate(p.request, ex.auth.project, p.plan.slots[0]!).micros ?? 0;
    expect(c.guard.spent(slotKey)).toBeGreaterThan(0);
    expect(c.guard.spent(slotKey)).toBeLessThanOrEqual(25 + reserved);
    expect(events).toBeGreaterThan(0);
    console.log(
      `stream stopped by its cap after ${events} events; slot cap spent ${c.guard.spent(slotKey)} µUSD, held 0`,
    );
  });

  it('a client that stops reading a stream finishes it as aborted, holding nothing', async () => {
    const c = compose(['cache', 'sessions'], now);
    const r = await c.pipeline.run(exchange('request'), ask('capped', { model: undefined }, true));
    if (r.kind !== 'streaming') throw new Error(`expected a stream, got ${r.kind}`);
    await r.events.next();
    await r.events.return(undefined as never);
    const end: StreamEnd = await r.ended;
    expect(end.ok).toBe(false);
    if (!end.ok) expect(end.failure.aborted).toBe(true);
    await c.release();
    expect(c.guard.committed(PROJECT_CAP())).toBe(0);
    expect(c.guard.committed(capKey(APP, `${NS}/capped-primary`))).toBe(0);
  });

  it('a client that goes away during a call gives back everything (nothing was answered)', async () => {
    const c = compose(['cache', 'sessions'], now);
    const ac = new AbortController();
    const pending = c.pipeline.run(exchange('request', { signal: ac.signal }), ask('slow'));
    setTimeout(() => ac.abort(), 50);
    const r = await pending;
    expect(r.kind).toBe('failed');
    if (r.kind === 'failed') expect(r.failure.aborted).toBe(true);
    await c.release();
    const slotKey = capKey(APP, `${NS}/slow-primary`);
    expect(c.guard.committed(slotKey)).toBe(0);
    expect(c.guard.spent(slotKey)).toBe(0);
    expect(c.guard.committed(PROJECT_CAP())).toBe(0);
  });

  it('a cache hit is answered under a reached project cap; a miss is refused', async () => {
    const c = compose(['cache', 'sessions'], now);
    const tight = auth(TIGHT_KEY);
    const first = await c.pipeline.run(exchange('request', { auth: tight }), ask('tight-cached'));
    expect(first.kind).toBe('answered');
    expect(first.notes.cache).toBe('miss');
    await settledTick();
    // Spend the project cap with other questions until it refuses: the cap is reached.
    let misses = 0;
    for (;;) {
      const r = await c.pipeline.run(exchange('request', { auth: tight }), {
        body: { workflow: 'tight-cached', messages: [{ role: 'user', content: `question ${misses}` }] },
        stream: false,
      });
      await settledTick();
      if (r.kind === 'refused') break;
      misses++;
      if (misses > 100) throw new Error('the cap never refused');
    }
    const cap = capsOf(tight.project.config).project[0]!;
    const ref = capRef(tight.project.config.id, cap, now());
    expect(c.guard.spent(ref.key)).toBeGreaterThanOrEqual(cap.limitMicros - 100);
    const hit = await c.pipeline.run(exchange('request', { auth: tight }), ask('tight-cached'));
    expect(hit.kind).toBe('answered');
    if (hit.kind === 'answered') {
      expect(hit.notes.cache).toBe('hit');
      expect(hit.answer.costMicros).toBe(0);
      expect(hit.answer.slot).toBeUndefined();
    }
    const miss = await c.pipeline.run(exchange('request', { auth: tight }), {
      body: { workflow: 'tight-cached', messages: [{ role: 'user', content: 'something else' }] },
      stream: false,
    });
    expect(miss.kind).toBe('refused');
    if (miss.kind === 'refused') expect(miss.error.code).toBe('project_budget_exceeded');
    await c.release();
    expect(c.guard.committed(ref.key)).toBe(0);
  });

  it('an async acceptance keeps its token units for the job and gives its caps back; the job corrects them', async () => {
    const guard = new MemoryGuardStore(now);
    const accepting = compose(['cache', 'sessions'], now, { guard, member: 'pod-a' });
    const accepted = await accepting.pipeline.accept(exchange('accept'), ask('capped', { max_tokens: 300 }));
    expect(accepted.kind).toBe('accepted');
    if (accepted.kind !== 'accepted') return;
    const admitted = accepted.notes.carried?.admittedTokens ?? 0;
    expect(admitted).toBeGreaterThan(300);
    await accepting.release();
    expect(guard.committed(PROJECT_CAP())).toBe(0);
    expect(guard.committed(capKey(APP, `${NS}/capped-primary`))).toBe(0);
    // The job runs on another pod of the same store.
    const running = compose(['cache', 'sessions'], now, { guard, member: 'pod-b' });
    const job = await running.pipeline.run(
      exchange('job', { carried: { admittedTokens: admitted } }),
      ask('capped', { max_tokens: 300 }),
    );
    expect(job.kind).toBe('answered');
    if (job.kind !== 'answered') return;
    await running.release();
    const cost = job.answer.costMicros ?? -1;
    expect(guard.spent(PROJECT_CAP())).toBe(cost);
    expect(guard.spent(capKey(APP, `${NS}/capped-primary`))).toBe(cost);
    expect(guard.committed(PROJECT_CAP())).toBe(0);
    // The job's real usage replaced the acceptance's estimate on the token limit: a third pod sees
    // the limit as one that served only a direct request of the same size.
    const probe = compose(['cache', 'sessions'], now, { guard, member: 'pod-c' });
    const fresh = compose(['cache', 'sessions'], now);
    const direct = await fresh.pipeline.run(exchange('request'), ask('capped', { max_tokens: 300 }));
    expect(direct.kind).toBe('answered');
    await fresh.release();
    expect(await remainingTokens(probe)).toBe(await remainingTokens(fresh));
    console.log(
      `async: ${admitted} tokens held at acceptance; job cost ${cost} µUSD on the project and slot caps`,
    );
  });

  it('a summary call runs through limits and caps alone and settles at its real cost', async () => {
    const c = compose(['cache', 'sessions'], now);
    const ex = exchange('summary');
    const p = prepare(
      ex.auth,
      { workflow: 'capped', messages: [{ role: 'user', content: 'Summarise: green.' }] },
      { async: false },
    );
    const r = await c.summaries.call(ex, p);
    expect(r.kind).toBe('answered');
    if (r.kind !== 'answered') return;
    expect(r.notes.rateLimitHeaders).toBeUndefined();
    await c.release();
    const cost = r.answer.costMicros ?? -1;
    expect(cost).toBeGreaterThan(0);
    expect(c.guard.spent(PROJECT_CAP())).toBe(cost);
    expect(c.guard.spent(capKey(APP, `${NS}/capped-primary`))).toBe(cost);
    expect(c.guard.committed(PROJECT_CAP())).toBe(0);
  });

  it('reordering the independent features (cache, sessions) changes no result and no store state', async () => {
    /** What a scenario produced, with the run-specific parts (ids, timings) left out. */
    const digest = (r: PipelineResult) => ({
      kind: r.kind,
      cache: r.notes.cache ?? null,
      session: r.notes.sessionId ? 'yes' : 'no',
      headers: r.notes.rateLimitHeaders ?? null,
      ...(r.kind === 'answered'
        ? {
            cost: r.answer.costMicros,
            slot: r.answer.slot?.slot ?? null,
            content: r.answer.result.kind === 'chat' ? r.answer.result.content : null,
          }
        : {}),
      ...(r.kind === 'refused' ? { code: r.error.code } : {}),
      ...(r.kind === 'failed' ? { code: r.failure.code } : {}),
    });
    const scenario = async (order: ('cache' | 'sessions')[]) => {
      const c = compose(order, now);
      const out: unknown[] = [];
      const run = async (req: PipelineRequest) => {
        const r = await c.pipeline.run(exchange('request'), req);
        if (r.kind === 'streaming') for await (const _ of { [Symbol.asyncIterator]: () => r.events });
        out.push(digest(r.kind === 'streaming' ? { ...r, kind: 'streaming' } : r));
      };
      await run(ask('cached'));
      await run(ask('cached'));
      await run(ask('cached', { messages: [{ role: 'user', content: 'other' }] }));
      const started = await c.pipeline.run(exchange('request'), ask('memory'));
      out.push(digest(started));
      await run(ask('memory', { session_id: started.notes.sessionId }));
      await run(ask('memory', { session_id: 'not-a-session' }));
      await run(ask('cached', { session_id: '00000000-0000-4000-8000-000000000000' }));
      await run(ask('capped'));
      await run(ask('streamy', {}, true));
      await c.sessions.workDone();
      await c.release();
      const keys = [
        PROJECT_CAP(),
        capKey(APP, `${NS}/capped-primary`),
        capKey(APP, `${NS}/memory-primary`),
        capKey(APP, `${NS}/streamy-primary`),
      ];
      return { out, spent: keys.map((k) => c.guard.spent(k)), held: keys.map((k) => c.guard.committed(k)) };
    };
    const a = await scenario(['cache', 'sessions']);
    const b = await scenario(['sessions', 'cache']);
    expect(b).toEqual(a);
    expect(a.held).toEqual([0, 0, 0, 0]);
    console.log(
      `reordering: ${a.out.length} results identical, spent ${JSON.stringify(a.spent)} µUSD on both orders`,
    );
  });
  it('admission answers at once while the leases have room, and waits only for a renewal', async () => {
    const guard = new MemoryGuardStore(now);
    const limits = limitsAndCaps({
      store: guard,
      registry: new Registry(),
      logger: pino({ level: 'silent' }),
      now,
      thresholds: { log: () => {}, emit: () => {} },
      member: 'pod-sync',
    });
    const begin = () => {
      const ex = exchange('request');
      const p = prepare(ex.auth, ask('capped').body, { async: false });
      return limits.begin({ ex, p, providerOptional: false });
    };
    // The pod holds no lease yet: the first request waits for the store's grant.
    const first = begin();
    expect(first).toBeInstanceOf(Promise);
    const runs = [await first];
    // The next ones take from what was granted, in the same turn: no promise, no store call.
    for (let i = 0; i < 5; i++) {
      const next = begin();
      expect(next).not.toBeInstanceOf(Promise);
      runs.push(next as Awaited<typeof first>);
    }
    expect(runs.every((r) => r?.notes?.rateLimitHeaders?.['x-ratelimit-remaining-requests'])).toBe(true);
    for (const r of runs)
      r?.finish({ kind: 'refused', error: new GatewayError('service_unavailable', 'test over') });
    await limits.close();
    expect(guard.committed(PROJECT_CAP())).toBe(0);
  });
});
