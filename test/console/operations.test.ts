/**
 * The console's operations pages in a real browser (Debian's chromium through playwright-core)
 * against a real gateway on a real Redis, upstreams from the provider simulator and a real webhook
 * receiver: spend caps with what Redis counted, rate limits, API keys without a key, webhooks with
 * a dead letter replayed from the page, usage charts, and the live tail (paused while hidden).
 * Hostile text reaches the pages through answers and webhook payloads; axe runs in light and dark.
 */
import { createHash } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningRedis, startRedis } from '#devkit/redis';
import { WEBHOOK_SECRET } from '../async/harness.ts';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { NO_AI_SCOPE_KEY, NS, PROJECT } from '../harness/manifests.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import { startReceiver } from '../webhooks/receiver.ts';
import { accessibilityProblems, launch, openPage, type Watched } from './browser.ts';
import { CONSOLE_DIR, ensureBundle } from './bundle.ts';
import { screenshotPath } from './helpers.ts';
import { HOSTILE, headers, manifests, OLD_OPS_KEY, OPS_KEY, until } from './operations-fixture.ts';

let redis: RunningRedis;
let sim: Simulator;
let gw: RunningGateway;
let browser: Browser;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let receiverStatus = 410;
const opened: Watched[] = [];

const ask = (wf: string, content: string) =>
  fetch(`${gw.url}/v1/ai`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ workflow: wf, messages: [{ role: 'user', content }] }),
  }).then((r) => r.json() as Promise<Record<string, unknown>>);
const getJson = async (path: string, key = OPS_KEY) => {
  const r = await fetch(`${gw.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> & { data: never[] } };
};

/** Signed in on the page `hash` (this gateway has no workflow backend, so not on the workflows page). */
async function signedIn(hash: string, heading: string, scheme: 'light' | 'dark' = 'light'): Promise<Watched> {
  const w = await openPage(browser, scheme);
  opened.push(w);
  await w.page.goto(`${gw.url}/console/#/${hash}`);
  await w.page.getByLabel('API key').fill(OPS_KEY);
  await w.page.getByRole('button', { name: 'Sign in' }).click();
  await w.page.getByRole('heading', { name: heading, level: 1 }).waitFor();
  return w;
}

async function visit(w: Watched, hash: string, heading: string): Promise<void> {
  await w.page.goto(`${gw.url}/console/#/${hash}`);
  await w.page.getByRole('heading', { name: heading, level: 1 }).waitFor();
  await w.page.locator('main p[aria-live="polite"]:has-text("Loading")').waitFor({ state: 'detached' });
}

/** axe's serious and critical findings, none allowed, in the light and the dark scheme. */
async function bothSchemesAccessible(w: Watched): Promise<void> {
  for (const scheme of ['light', 'dark'] as const) {
    await w.page.emulateMedia({ colorScheme: scheme });
    expect(await accessibilityProblems(w.page), scheme).toEqual([]);
  }
}

async function clean(w: Watched): Promise<void> {
  expect(await w.violations()).toEqual([]);
  expect(w.problems).toEqual([]);
  expect(await w.page.evaluate('window.__pwned')).toBeUndefined();
}

beforeAll(async () => {
  await ensureBundle();
  [redis, sim, browser, receiver] = await Promise.all([
    // With an AOF, so the fault case's restart keeps what Redis held (sessions, logs, spend).
    startRedis({ appendonly: true }),
    startSimulator(),
    launch(),
    startReceiver(WEBHOOK_SECRET, () => ({ status: receiverStatus })),
  ]);
  gw = await startGateway(manifests(sim.url, receiver.url), {
    redisUrl: redis.url,
    consoleWeb: { dir: CONSOLE_DIR, limits: { attempts: 1000 }, tailPollMs: 200, tailsPerProject: 4 },
  });
  for (let i = 0; i < 3; i++) await ask('chat', `hello ${i}`);
  await ask('other', HOSTILE);
  // An async answer whose webhook the receiver refuses with 410: dead-lettered at once, endpoint disabled.
  await fetch(`${gw.url}/v1/ai/async`, {
    method: 'POST',
    headers,
    body: JSON.stringify({ workflow: 'other', messages: [{ role: 'user', content: HOSTILE }] }),
  });
  await until(async () => {
    const r = await getJson('/v1/webhooks/dead-letters');
    return r.body.data.length === 1 ? true : undefined;
  });
  await gw.gateway.state.flush();
}, 120_000);

afterAll(async () => {
  for (const w of opened) await w.context.close().catch(() => {});
  await browser?.close();
  await gw?.close();
  await Promise.all([sim?.close(), redis?.stop(), receiver?.close()]);
});

describe('console operations pages', () => {
  it('spend and limits: each cap with what Redis counted this period, filtered on the server', async () => {
    // What finished requests cost reaches the spent counter with the pod's next lease report (~100 ms).
    const api = await until(async () => {
      const r = await getJson('/console/api/limits');
      return (r.body.data as unknown as { spent_usd: string }[])[1]?.spent_usd === '0.000072' ? r : undefined;
    });
    expect(api.status).toBe(200);
    const caps = api.body.data as unknown as Record<string, unknown>[];
    expect(caps.map((c) => c.id)).toEqual([`${NS}/project-daily`, `${NS}/chat-primary`]);
    const chat = caps[1]!;
    expect(Number(chat.spent_usd)).toBeGreaterThan(0);
    expect(chat).toMatchObject({ scope: 'workflow', workflow: 'chat', slot: 'primary', period: 'hourly' });
    // Three requests of $0.000024 against $0.00005: the third was admitted below the cap and passed it.
    expect(chat).toMatchObject({ spent_usd: '0.000072', state: 'exceeded', threshold_percent: 100 });
    expect(Date.parse(String(chat.reset_at)) - Date.now()).toBeLessThanOrEqual(3_600_000);
    expect(api.body.rate_limits).toEqual([
      { owner: 'project', id: `${NS}.${PROJECT}`, requests_per_minute: 6000, tokens_per_minute: null },
      { owner: 'api_key', id: `${NS}/ops`, requests_per_minute: 3000, tokens_per_minute: 900000 },
    ]);
    const filtered = await getJson('/console/api/limits?scope=workflow&period=hourly');
    expect((filtered.body.data as unknown as { id: string }[]).map((c) => c.id)).toEqual([
      `${NS}/chat-primary`,
    ]);
    expect((await getJson('/console/api/limits?state=nope')).body).toMatchObject({
      error: 'invalid_request',
      param: 'state',
    });
    expect((await getJson('/console/api/limits?bogus=1')).body).toMatchObject({ param: 'bogus' });
    expect((await fetch(`${gw.url}/console/api/limits`)).status).toBe(401);

    const w = await signedIn('limits', 'Spend and limits');
    await visit(w, 'limits', 'Spend and limits');
    const rows = w.page.locator('main table').first().locator('tbody tr');
    expect(await rows.count()).toBe(2);
    const row = await rows.nth(1).textContent();
    expect(row).toContain(`${NS}/chat-primary`);
    expect(row).toContain('0.000072 / 0.00005');
    expect(row).toContain('exceeded');
    expect(await w.page.locator('main table').nth(1).textContent()).toContain('900000');
    await w.page.screenshot({ path: screenshotPath('console-limits.png'), fullPage: true });
    await visit(w, 'limits?scope=project', 'Spend and limits');
    expect(await w.page.locator('main table').first().locator('tbody tr').count()).toBe(1);
    await bothSchemesAccessible(w);
    await clean(w);
  });

  it('API keys: declared by which ApiKey, scopes, rotation and a fingerprint, never the key', async () => {
    const api = await getJson('/console/api/keys');
    const ops = (api.body.data as unknown as Record<string, unknown>[]).find((k) => k.key_id === `${NS}/ops`);
    const sha = (k: string) => createHash('sha256').update(k).digest('hex').slice(0, 8);
    expect(ops).toMatchObject({
      resource: { kind: 'ApiKey', namespace: NS, name: 'ops' },
      scopes: ['ai', 'console'],
      fingerprint: `sha256:${sha(OPS_KEY)}`,
      rotation: { state: 'rotating', previous: [{ fingerprint: `sha256:${sha(OLD_OPS_KEY)}` }] },
    });
    const raw = JSON.stringify(api.body);
    for (const k of [OPS_KEY, OLD_OPS_KEY, NO_AI_SCOPE_KEY]) expect(raw).not.toContain(k.slice(8, 20));
    // Only the project's own keys: the other project's key is not listed.
    expect(raw).not.toContain(`${NS}/other`);
    const consoleOnly = await getJson('/console/api/keys?scope=console&state=active');
    expect((consoleOnly.body.data as unknown as { key_id: string }[]).map((k) => k.key_id)).toEqual([
      `${NS}/console-only`,
    ]);

    const w = await signedIn('keys', 'API keys', 'dark');
    await visit(w, 'keys', 'API keys');
    const text = (await w.page.locator('main').textContent()) ?? '';
    expect(text).toContain(`sha256:${sha(OPS_KEY)}`);
    expect(text).toContain('rotating');
    expect(await w.page.content()).not.toContain(OPS_KEY.slice(8));
    await visit(w, 'keys?state=rotating', 'API keys');
    expect(await w.page.locator('main tbody tr').count()).toBe(1);
    await bothSchemesAccessible(w);
    await clean(w);
  });

  it('webhooks: the endpoint disabled by 410, its dead letter as text, replayed from the page', async () => {
    const w = await signedIn('webhooks', 'Webhooks');
    await visit(w, 'webhooks', 'Webhooks');
    const endpoints = await w.page.locator('main table').first().textContent();
    expect(endpoints).toContain(receiver.url);
    expect(endpoints).toContain('disabled');
    const letter = w.page.locator('ol.letters > li');
    expect(await letter.count()).toBe(1);
    await w.page.screenshot({ path: screenshotPath('console-webhooks.png'), fullPage: true });
    await letter.locator('summary').click();
    // Inside the JSON payload, as the JSON text that was signed (its quotes escaped).
    expect(await letter.locator('pre.body').textContent()).toContain('<img src=x onerror=');
    expect(await letter.textContent()).toContain('410');
    // Its one attempt, from the request log, beside it.
    expect(await letter.locator('ol.letter-attempts li').textContent()).toMatch(
      /attempt 1: disabled HTTP 410/,
    );
    await bothSchemesAccessible(w);

    receiverStatus = 200;
    const before = receiver.deliveries.length;
    // From the keyboard: Tab reaches the letter's Replay button, Enter presses it.
    let focused = '';
    for (let i = 0; i < 40 && !focused.startsWith('Replay msg_'); i++) {
      await w.page.keyboard.press('Tab');
      focused = await w.page.evaluate<string>("document.activeElement?.getAttribute('aria-label') ?? ''");
    }
    expect(focused).toMatch(/^Replay msg_/);
    await w.page.keyboard.press('Enter');
    await w.page.getByText('Replayed 1 dead letter.').waitFor();
    const again = await until(async () => receiver.deliveries[before]);
    expect(again.verified).toBe(true);
    expect(again.answered).toBe(200);
    let last = '';
    await until(async () => {
      await gw.gateway.state.flush();
      await w.page.reload();
      await w.page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor();
      await w.page.locator('main p[aria-live="polite"]:has-text("Loading")').waitFor({ state: 'detached' });
      const t = (await w.page.locator('main').textContent()) ?? '';
      last = t;
      return t.includes('No dead letter.') && t.includes('delivered') ? true : undefined;
    }).catch((err: Error) => {
      throw new Error(`${err.message}: ${last}`);
    });
    expect(await w.page.locator('main table').first().textContent()).toContain('enabled');
    await clean(w);
  });

  it('analytics: requests, tokens, cost, errors, cache hits, failovers and latency per workflow from the usage counters, as charts and a table', async () => {
    // The chat cap is exceeded: one more request is refused, an error counted as it settles.
    const refused = await ask('chat', 'over the cap');
    expect(refused.error).toBeDefined();
    await gw.gateway.state.flush();
    const w = await signedIn('analytics', 'Analytics', 'dark');
    await visit(w, 'analytics?range=24h&group_by=workflow', 'Analytics');
    expect(await w.page.locator('figure.chart').count()).toBe(8);
    const usage = await getJson('/v1/usage?group_by=workflow&include=quality');
    type Row = { workflow: string; requests: number; errors: number; settled_requests: number };
    const rows = usage.body.data as unknown as Row[];
    const counted = (wf: string, k: keyof Row = 'requests') =>
      rows.filter((r) => r.workflow === wf).reduce((n, r) => n + Number(r[k]), 0);
    expect(counted('chat')).toBe(3);
    expect(counted('other')).toBe(2);
    expect(counted('chat', 'errors')).toBeGreaterThanOrEqual(1);
    expect(counted('chat', 'settled_requests')).toBe(counted('chat') + counted('chat', 'errors'));
    const cells = (wf: string) =>
      w.page
        .locator('main table tbody tr')
        .filter({ hasText: new RegExp(`^${wf}`) })
        .locator('td');
    expect(await cells('chat').nth(1).textContent()).toBe('3');
    expect(await cells('other').nth(1).textContent()).toBe('2');
    expect(await cells('chat').nth(4).textContent()).toBe(String(counted('chat', 'errors')));
    const p50 = Number(await cells('chat').nth(7).textContent());
    const p95 = Number(await cells('chat').nth(8).textContent());
    expect(p50).toBeGreaterThan(0);
    expect(p95).toBeGreaterThanOrEqual(p50);
    console.log(
      `analytics: chat ${counted('chat', 'settled_requests')} settled, ${counted('chat', 'errors')} errors, p50 ${p50} ms, p95 ${p95} ms`,
    );
    // One line per workflow in each of the eight charts.
    const groups = await w.page.locator('main table tbody tr').count();
    expect(await w.page.locator('polyline.line').count()).toBe(8 * groups);
    await visit(w, 'analytics?range=7d&granularity=day&group_by=model', 'Analytics');
    expect(await w.page.locator('main table tbody').textContent()).toContain('oai/gpt-4o-mini');
    await bothSchemesAccessible(w);
    await w.page.emulateMedia({ colorScheme: 'dark' });
    await w.page.screenshot({ path: screenshotPath('console-analytics.png'), fullPage: true });
    await clean(w);
  });

  it('live tail: new entries arrive with the filters; a hidden tab stops reading and catches up when shown', async () => {
    const w = await signedIn('logs?workflow=other&live=1', 'Request logs');
    await w.page.getByText('Live: new entries appear at the top.').waitFor();
    const rows = w.page.locator('main tbody tr');
    await ask('chat', 'not this workflow');
    await ask('other', HOSTILE);
    await rows.first().waitFor();
    expect(await rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain('other');

    const hide = (hidden: boolean) =>
      // As a browser does when the tab goes to the background (or comes back).
      w.page.evaluate(`Object.defineProperty(document, 'hidden', { value: ${hidden}, configurable: true });
        document.dispatchEvent(new Event('visibilitychange'));`);
    await hide(true);
    await w.page.getByText('Paused while the tab is hidden.').waitFor();
    await ask('other', 'while hidden');
    await gw.gateway.state.flush();
    await new Promise((r) => setTimeout(r, 600));
    expect(await rows.count()).toBe(1);
    await hide(false);
    await until(async () => ((await rows.count()) === 2 ? true : undefined));
    await bothSchemesAccessible(w);
    await clean(w);
  });

  it('the tail refuses bad filters in the API’s shape and needs the console scope', async () => {
    const bad = await getJson('/console/api/logs/tail?status=maybe');
    expect(bad).toMatchObject({ status: 400, body: { error: 'invalid_request', param: 'status' } });
    const aiOnly = await fetch(`${gw.url}/console/api/logs/tail`, {
      headers: { authorization: 'Bearer sy_live_TestKeyForTheGatewaySuite0123456789' },
    });
    expect(aiOnly.status).toBe(403);
    const ac = new AbortController();
    const res = await fetch(`${gw.url}/console/api/logs/tail?since=0&workflow=chat`, {
      headers: { authorization: `Bearer ${OPS_KEY}` },
      signal: ac.signal,
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let got = '';
    while (!got.includes('event: entry')) got += (await reader.read()).value ?? '';
    ac.abort();
    expect(got).toContain('"workflow":"chat"');
    expect(got).not.toContain('"bodies"');

    // At most 4 tails of one project at once on this gateway (the browser pages may hold some).
    const held: AbortController[] = [];
    let refused: Response | undefined;
    for (let i = 0; i < 6 && !refused; i++) {
      const c = new AbortController();
      const r = await fetch(`${gw.url}/console/api/logs/tail`, { headers, signal: c.signal });
      if (r.status === 429) refused = r;
      else held.push(c);
    }
    expect(held.length).toBeLessThanOrEqual(4);
    expect(refused?.headers.get('retry-after')).toBe('5');
    expect(await refused?.json()).toMatchObject({ error: 'rate_limit_exceeded' });
    for (const c of held) c.abort();
    await until(async () => {
      const c = new AbortController();
      const r = await fetch(`${gw.url}/console/api/logs/tail`, { headers, signal: c.signal });
      c.abort();
      return r.status === 200 ? true : undefined;
    });
  });

  it('fault: Redis stops mid-tail; the tail says so and carries on, limits answer 503, and after the restart new entries arrive', async () => {
    const ac = new AbortController();
    const res = await fetch(`${gw.url}/console/api/logs/tail?workflow=other`, {
      headers: { authorization: `Bearer ${OPS_KEY}` },
      signal: ac.signal,
    });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let got = '';
    // One read in flight at a time, collected as it lands (a read given up on would lose its chunk).
    void (async () => {
      for (;;) {
        const r = await reader.read().catch(() => ({ done: true, value: undefined }));
        if (r.done) return;
        got += r.value ?? '';
      }
    })();
    const read = (want: string, ms = 15_000) =>
      until(async () => (got.includes(want) ? true : undefined), ms);
    await read('event: open');

    await redis.stop();
    await read('event: unavailable');
    const t0 = performance.now();
    const limits = await getJson('/console/api/limits');
    const answeredMs = performance.now() - t0;
    expect(limits).toMatchObject({ status: 503, body: { error: 'service_unavailable' } });
    const outages = got.split('event: unavailable').length - 1;

    await redis.restart();
    const t1 = performance.now();
    const answer = await until(async () => {
      const r = await fetch(`${gw.url}/v1/ai`, {
        method: 'POST',
        headers,
        body: JSON.stringify({
          workflow: 'other',
          messages: [{ role: 'user', content: 'after the restart' }],
        }),
      });
      await r.arrayBuffer();
      return (r.status === 200 && r.headers.get('x-service-request-log-id')) || undefined;
    }, 20_000);
    await read(answer, 20_000);
    const arrivedMs = performance.now() - t1;
    ac.abort();
    console.log(
      `[console fault] tail during the outage: ${outages} unavailable event(s), limits 503 in ${answeredMs.toFixed(0)} ms; ` +
        `after the restart the new entry reached the tail ${arrivedMs.toFixed(0)} ms after Redis was back`,
    );
    expect(outages).toBeGreaterThanOrEqual(1);
    expect(answeredMs).toBeLessThan(1000);
    expect((await getJson('/console/api/limits')).status).toBe(200);
  }, 60_000);
});
