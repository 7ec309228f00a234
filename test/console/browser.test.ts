/**
 * The web console in a real browser (Debian's chromium through playwright-core) against a real
 * gateway on a real Redis, with upstreams from the provider simulator: sign-in, every page,
 * hostile data, CSRF, accessibility in both themes, the first-load budget.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type RunningRedis, startRedis } from '#devkit/redis';
import { FolderConsoleBackend } from '#gateway/console/index';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { API_KEY, baseConfig, NO_AI_SCOPE_KEY, PROJECT, PROJECT_ID, workflow } from '../harness/manifests.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import { accessibilityProblems, launch, openPage, type Watched } from './browser.ts';
import { CONSOLE_DIR, ensureBundle } from './bundle.ts';
import { screenshotPath } from './helpers.ts';

const HOSTILE =
  '<script>window.__pwned=1</script><img src=x onerror="window.__pwned=1"> <a href="javascript:window.__pwned=1">x</a>';

let redis: RunningRedis;
let sim: Simulator;
let gw: RunningGateway;
let other: RunningGateway;
let browser: Browser;
let dir: string;
const opened: Watched[] = [];

function manifests(simUrl: string) {
  return [
    ...baseConfig(simUrl).map((o) =>
      o.kind === 'Project' && o.metadata.name === PROJECT
        ? { ...o, spec: { requestLogs: { bodies: true, maxEntries: 1000 } } }
        : o,
    ),
    workflow('chat', { provider: 'oai', model: 'gpt-4o-mini', description: HOSTILE }),
    workflow('failover', {
      provider: 'oai',
      model: 'fail-503',
      backups: [{ provider: 'claude', model: 'claude-haiku-4-5' }],
    }),
    workflow('broken', { provider: 'oai', model: 'fail-400' }),
  ];
}

async function ask(wf: string, content: string): Promise<void> {
  const res = await fetch(`${gw.url}/v1/ai`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ workflow: wf, messages: [{ role: 'user', content }] }),
  });
  await res.arrayBuffer();
}

/** A page signed in through a fresh one-time link. */
async function signedIn(scheme: 'light' | 'dark' = 'light'): Promise<Watched> {
  const w = await openPage(browser, scheme);
  opened.push(w);
  const link = await gw.gateway.consoleWeb!.oneTimeLink();
  await w.page.goto(`${gw.url}/console/#/link/${link}`);
  await w.page.getByRole('heading', { name: 'Workflows' }).waitFor();
  return w;
}

/** Nothing ran that should not have: no CSP violation, no page error, no injected script. */
async function clean(w: Watched): Promise<void> {
  expect(await w.violations()).toEqual([]);
  expect(w.problems).toEqual([]);
  expect(await w.page.evaluate('window.__pwned')).toBeUndefined();
}

beforeAll(async () => {
  await ensureBundle();
  [redis, sim, browser] = await Promise.all([startRedis(), startSimulator(), launch()]);
  // The console API reads workflows from a config folder, as embedded mode does.
  dir = await mkdtemp(join(tmpdir(), 'sy-console-web-'));
  await writeFile(
    join(dir, 'config.yaml'),
    manifests(sim.url)
      .map((m) => stringify(m))
      .join('---\n'),
  );
  const opts = {
    redisUrl: redis.url,
    // Every sign-in of this suite comes from 127.0.0.1; the limit has its own test below.
    consoleWeb: { dir: CONSOLE_DIR, limits: { attempts: 1000 } },
    console: new FolderConsoleBackend({ dir, reload: async () => ({ verdicts: [] }) }),
  };
  gw = await startGateway(manifests(sim.url), opts);
  other = await startGateway(manifests(sim.url), opts);
  await ask('chat', HOSTILE);
  await ask('chat', 'hello');
  await ask('failover', 'hello');
  await ask('broken', 'hello');
  await ask('chat', 'javascript:window.__pwned=1');
  await gw.gateway.state.flush();
}, 120_000);

afterAll(async () => {
  for (const w of opened) await w.context.close().catch(() => {});
  await browser?.close();
  await Promise.all([gw?.close(), other?.close()]);
  await Promise.all([sim?.close(), redis?.stop()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('console in a browser', () => {
  it('first load is at most 80 KB of gzipped JavaScript, and the page has no inline script', async () => {
    const html = await readFile(join(CONSOLE_DIR, 'index.html'), 'utf8');
    const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
    expect(scripts.length).toBeGreaterThan(0);
    expect(scripts.every((s) => /\bsrc=/.test(s))).toBe(true);
    let bytes = 0;
    for (const s of scripts) {
      const src = /src="\.\/([^"]+)"/.exec(s)![1]!;
      bytes += gzipSync(await readFile(join(CONSOLE_DIR, src))).length;
    }
    expect(bytes).toBeLessThanOrEqual(80 * 1024);
  });

  it('signs in through the one-time link, which then is spent and leaves the address bar', async () => {
    const w = await openPage(browser);
    opened.push(w);
    const link = await gw.gateway.consoleWeb!.oneTimeLink();
    await w.page.goto(`${gw.url}/console/#/link/${link}`);
    await w.page.getByRole('heading', { name: 'Workflows' }).waitFor();
    expect(w.page.url()).not.toContain(link!);
    const [cookie] = await w.context.cookies();
    expect(cookie).toMatchObject({ name: 'sy_console', httpOnly: true, sameSite: 'Strict', path: '/' });
    await clean(w);

    const again = await openPage(browser);
    opened.push(again);
    await again.page.goto(`${gw.url}/console/#/link/${link}`);
    await again.page.getByRole('alert').filter({ hasText: 'already used' }).waitFor();
    await again.page.getByRole('heading', { name: /Sign in/ }).waitFor();
  });

  it('signs in with a console key, refuses a key without the scope, and keeps no key in the browser', async () => {
    const w = await openPage(browser);
    opened.push(w);
    await w.page.goto(`${gw.url}/console/`);
    await w.page.getByLabel('API key').fill(API_KEY);
    await w.page.getByRole('button', { name: 'Sign in' }).click();
    await w.page.getByRole('alert').filter({ hasText: 'console' }).waitFor();
    await w.page.getByLabel('API key').fill(NO_AI_SCOPE_KEY);
    await w.page.getByRole('button', { name: 'Sign in' }).click();
    await w.page.getByRole('heading', { name: 'Workflows' }).waitFor();
    const stored = await w.page.evaluate<string>('JSON.stringify({ ...localStorage, ...sessionStorage })');
    expect(stored).not.toContain('sy_live_');
    expect(await w.page.getByLabel('API key').count()).toBe(0);
    await clean(w);
  });

  it('lists the workflows and opens one: slots, declared vs served; a hostile description stays text', async () => {
    const w = await signedIn();
    const row = w.page.getByRole('row').filter({ hasText: 'failover' });
    await expect(row.getByRole('cell').nth(3).textContent()).resolves.toBe('1');
    const chat = w.page
      .locator('tbody tr')
      .filter({ has: w.page.getByRole('link', { name: 'chat', exact: true }) });
    await expect(chat.textContent()).resolves.toContain('<script>');
    await w.page.getByRole('link', { name: 'failover' }).click();
    await w.page.getByRole('heading', { name: 'Workflow failover' }).waitFor();
    expect(w.page.url()).toMatch(/#\/workflows\/failover$/);
    await expect(w.page.getByRole('row').filter({ hasText: 'backup 1' }).textContent()).resolves.toContain(
      'claude-haiku-4-5',
    );
    const version = gw.store.current!.version;
    await w.page.getByText(version).waitFor();
    await w.page.goto(`${gw.url}/console/#/workflows/chat`);
    await w.page.getByRole('heading', { name: 'Workflow chat' }).waitFor();
    await w.page.getByText(HOSTILE).first().waitFor();
    expect(await w.page.locator('main img, main script, main a[href^="javascript"]').count()).toBe(0);
    await clean(w);
  });

  it('pages the request logs by cursor and filters them, with the filters in the URL', async () => {
    const w = await signedIn();
    await w.page.goto(`${gw.url}/console/#/logs?limit=2`);
    await w.page.getByRole('heading', { name: 'Request logs' }).waitFor();
    const rows = w.page.locator('main tbody tr');
    await rows.first().waitFor();
    expect(await rows.count()).toBe(2);
    const firstPage = await rows.allTextContents();
    await w.page.getByRole('link', { name: 'Older entries' }).click();
    await w.page.waitForURL(/cursor=/);
    await w.page.getByRole('link', { name: 'First page' }).waitFor();
    const second = await rows.allTextContents();
    expect(second).toHaveLength(2);
    expect(second).not.toEqual(firstPage);

    await w.page.getByLabel('Status').selectOption('error');
    await w.page.getByRole('button', { name: 'Apply' }).click();
    await w.page.waitForURL(/status=error/);
    await w.page
      .getByRole('cell', { name: /upstream_error|client_error/ })
      .first()
      .waitFor();
    expect(await rows.count()).toBe(1);
    expect(await rows.first().textContent()).toContain('broken');
    expect(w.page.url()).not.toContain('cursor=');
    await clean(w);
  });

  it('opens an entry by its permalink: attempts of a failover, bodies with hostile content as text', async () => {
    const w = await signedIn();
    await w.page.goto(`${gw.url}/console/#/logs?workflow=failover`);
    await w.page.locator('main tbody a').first().click();
    await w.page.getByRole('heading', { name: /^Request / }).waitFor();
    const attempts = w.page.locator('ol.attempts li');
    await attempts.nth(1).waitFor();
    expect(await attempts.count()).toBe(2);
    expect(await attempts.nth(0).textContent()).toContain('fail-503');
    expect(await attempts.nth(1).textContent()).toContain('claude-haiku-4-5');
    expect(await w.page.locator('svg.waterfall rect').count()).toBe(2);
    // A permalink: the same view from a fresh load of the URL.
    const permalink = w.page.url();
    await w.page.goto('about:blank');
    await w.page.goto(permalink);
    await w.page.locator('ol.attempts li').nth(1).waitFor();
    await w.page.screenshot({ path: screenshotPath('console-log-detail.png') });

    await w.page.goto(`${gw.url}/console/#/logs?workflow=chat`);
    for (let i = 0; i < 3; i++) {
      await w.page.locator('main tbody a').nth(i).click();
      await w.page.locator('pre.body').waitFor();
      await w.page.goBack();
      await w.page.locator('main tbody a').nth(i).waitFor();
    }
    expect(await w.page.locator('main img, main script').count()).toBe(0);
    await clean(w);
  });

  it('works from the keyboard alone: sign in, open the logs, open an entry', async () => {
    const w = await openPage(browser);
    opened.push(w);
    const { page } = w;
    /** Presses Tab until the focused element matches `selector` (a bounded number of times). */
    const tabTo = async (selector: string) => {
      for (let i = 0; i < 40; i++) {
        await page.keyboard.press('Tab');
        if (
          await page.evaluate<boolean>(
            `document.activeElement?.matches(${JSON.stringify(selector)}) === true`,
          )
        )
          return;
      }
      throw new Error(`Tab never reached ${selector}`);
    };
    await page.goto(`${gw.url}/console/`);
    await page.getByLabel('API key').waitFor();
    await tabTo('#key');
    await page.keyboard.type(NO_AI_SCOPE_KEY);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Workflows' }).waitFor();
    await tabTo('header nav a:nth-child(2)');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Request logs' }).waitFor();
    await page.locator('main tbody a').first().waitFor();
    // The list carries no bodies: the hostile request body is nowhere on it.
    expect(await page.locator('main').textContent()).not.toContain('__pwned');
    await tabTo('main tbody a');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: /^Request / }).waitFor();
    await clean(w);
  });

  it('refuses a write through the session without the CSRF token or from another origin', async () => {
    const w = await signedIn();
    const answers = await w.page.evaluate(async (projectId) => {
      const url = `../api/console/projects/${projectId}/workflows`;
      // A body the console API refuses (400) once past the CSRF check: nothing is written.
      const body = JSON.stringify({ name: 'x', provider: 'oai' });
      const headers = { 'content-type': 'application/json' };
      const bare = await fetch(url, { method: 'POST', headers, body });
      const session = (await (await fetch('api/session')).json()) as { csrf_token: string };
      const withToken = await fetch(url, {
        method: 'POST',
        headers: { ...headers, 'x-csrf-token': session.csrf_token },
        body,
      });
      const signOut = await fetch('api/session', { method: 'DELETE' });
      return { bare: [bare.status, await bare.text()], withToken: withToken.status, signOut: signOut.status };
    }, PROJECT_ID);
    expect(answers.bare[0]).toBe(403);
    expect(answers.bare[1]).toContain('CSRF');
    expect(answers.withToken).toBe(400);
    expect(answers.signOut).toBe(403);

    const [cookie] = await w.context.cookies();
    const res = await fetch(`${gw.url}/console/api/session`, {
      method: 'DELETE',
      headers: {
        cookie: `sy_console=${cookie!.value}`,
        origin: 'https://evil.example',
        'x-csrf-token': await w.page.evaluate(
          async () => ((await (await fetch('api/session')).json()) as { csrf_token: string }).csrf_token,
        ),
      },
    });
    expect(res.status).toBe(403);
  });

  it('a session started on one gateway is served by another on the same Redis, and sign-out ends it', async () => {
    const w = await signedIn();
    const [cookie] = await w.context.cookies();
    const on = (g: RunningGateway) =>
      fetch(`${g.url}/v1/request-logs?limit=1`, { headers: { cookie: `sy_console=${cookie!.value}` } });
    expect((await on(other)).status).toBe(200);
    await w.page.getByRole('button', { name: 'Sign out' }).click();
    await w.page.getByRole('heading', { name: /Sign in/ }).waitFor();
    expect((await on(other)).status).toBe(401);
  });

  it('has no serious or critical accessibility problem on any page, light and dark', async () => {
    const found: string[] = [];
    for (const scheme of ['light', 'dark'] as const) {
      const out = await openPage(browser, scheme);
      opened.push(out);
      await out.page.goto(`${gw.url}/console/`);
      await out.page.getByLabel('API key').waitFor();
      found.push(...(await accessibilityProblems(out.page)).map((p) => `${scheme} sign-in: ${p}`));
      const w = await signedIn(scheme);
      const views: [string, RegExp][] = [
        ['#/workflows', /^Workflows$/],
        ['#/workflows/failover', /Workflow failover/],
        ['#/logs', /Request logs/],
      ];
      for (const [hash, heading] of views) {
        await w.page.goto(`${gw.url}/console/${hash}`);
        await w.page.getByRole('heading', { name: heading }).waitFor();
        await w.page.locator('main table').first().waitFor();
        found.push(...(await accessibilityProblems(w.page)).map((p) => `${scheme} ${hash}: ${p}`));
      }
      await w.page.locator('main tbody a').first().click();
      await w.page.locator('ol.attempts, main p').first().waitFor();
      found.push(...(await accessibilityProblems(w.page)).map((p) => `${scheme} log entry: ${p}`));
    }
    expect(found).toEqual([]);
  }, 90_000);

  it('behind a path prefix the cookie is scoped to it; /console redirects relatively', async () => {
    const link = await gw.gateway.consoleWeb!.oneTimeLink();
    const res = await fetch(`${gw.url}/console/api/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-prefix': '/switchyard' },
      body: JSON.stringify({ link }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('set-cookie')).toContain('Path=/switchyard/;');
    const redirect = await fetch(`${gw.url}/console`, { redirect: 'manual' });
    expect(redirect.status).toBe(308);
    expect(redirect.headers.get('location')).toBe('console/');
    expect(redirect.headers.get('content-security-policy')).toContain("default-src 'self'");
  });

  it.each([
    ['memory', undefined],
    // Database 1: a counter of its own, apart from the sign-ins of the suite above.
    ['Redis', () => `${redis.url}/1`],
  ] as const)('limits sign-in attempts per client address (%s)', async (_name, url) => {
    const limited = await startGateway(manifests(sim.url), {
      redisUrl: url?.(),
      consoleWeb: { dir: CONSOLE_DIR, limits: { attempts: 5 } },
    });
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await fetch(`${limited.url}/console/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ key: `sy_live_wrong${'x'.repeat(24)}` }),
      });
      statuses.push(res.status);
    }
    await limited.close();
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
  });
});
