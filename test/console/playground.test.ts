/**
 * The console's playground in a real browser (Debian's chromium through playwright-core) against a
 * real gateway on a real Redis, upstreams from the provider simulator: a request through the real
 * pipeline with its failover trail, its request-log entry marked as from the console, copy as
 * code without the key, the `ai` scope, hostile answers, accessibility.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type RunningRedis, startRedis } from '#devkit/redis';
import { FolderConsoleBackend } from '#gateway/console/index';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { apiKey, baseConfig, PROJECT, provider, workflow } from '../harness/manifests.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import { accessibilityProblems, launch, openPage, type Watched } from './browser.ts';
import { CONSOLE_DIR, ensureBundle } from './bundle.ts';
import { screenshotPath } from './helpers.ts';

/** A key that may sign in to the console and run workflows. */
const PLAY_KEY = 'sy_live_PlaygroundKey0123456789abcdefghijk';
/** Within the simulator's 40 echoed characters: the answer carries it back. */
const HOSTILE_ANSWER = '<img src=x onerror="window.__pwned=1">';
/** A 1x1 PNG as a data: URL, the image a vision request carries. */
const PNG =
  'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=';

let redis: RunningRedis;
let sim: Simulator;
let gw: RunningGateway;
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
    ...apiKey('playground', PLAY_KEY, { scopes: ['ai', 'console'] }),
    // Driven in json_object mode, the simulator answers {"reply": ...} whatever the schema asks.
    ...provider('compat', 'openai-compatible', simUrl, ['llama']),
    workflow('chat', { provider: 'oai', model: 'gpt-4o-mini' }),
    workflow('structured', {
      provider: 'compat',
      model: 'llama',
      backups: [{ provider: 'oai', model: 'gpt-4o-mini' }],
      structuredOutput: {
        schema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      },
    }),
    workflow('vision', { requestType: 'vision', provider: 'gem', model: 'gemini-2.5-flash' }),
    workflow('complete', { requestType: 'completion', provider: 'oai', model: 'gpt-4o-mini' }),
    workflow('embed', { requestType: 'embedding', provider: 'oai', model: 'gpt-4o-mini' }),
    workflow('image', { requestType: 'image', provider: 'oai', model: 'gpt-4o-mini' }),
    workflow('speech', { requestType: 'audio', provider: 'oai', model: 'gpt-4o-mini' }),
    workflow('failover', {
      provider: 'oai',
      model: 'fail-503',
      backups: [{ provider: 'claude', model: 'claude-haiku-4-5' }],
    }),
  ];
}

/** A page signed in with a key that has both scopes. */
async function signedIn(scheme: 'light' | 'dark' = 'light'): Promise<Watched> {
  const w = await openPage(browser, scheme);
  opened.push(w);
  await w.page.goto(`${gw.url}/console/`);
  await w.page.getByLabel('API key').fill(PLAY_KEY);
  await w.page.getByRole('button', { name: 'Sign in' }).click();
  await w.page.getByRole('heading', { name: 'Workflows' }).waitFor();
  return w;
}

/** Opens the playground on a workflow, writes the user message and sends it. */
async function send(w: Watched, wf: string, user: string): Promise<void> {
  await w.page.goto(`${gw.url}/console/#/playground?workflow=${encodeURIComponent(wf)}`);
  await w.page.getByRole('heading', { name: 'Playground' }).waitFor();
  await w.page.getByLabel('User message').fill(user);
  await w.page.getByRole('button', { name: 'Send' }).click();
}

async function clean(w: Watched): Promise<void> {
  expect(await w.violations()).toEqual([]);
  expect(w.problems).toEqual([]);
  expect(await w.page.evaluate('window.__pwned')).toBeUndefined();
}

beforeAll(async () => {
  await ensureBundle();
  [redis, sim, browser] = await Promise.all([startRedis(), startSimulator(), launch()]);
  dir = await mkdtemp(join(tmpdir(), 'sy-console-playground-'));
  await writeFile(
    join(dir, 'config.yaml'),
    manifests(sim.url)
      .map((m) => stringify(m))
      .join('---\n'),
  );
  gw = await startGateway(manifests(sim.url), {
    redisUrl: redis.url,
    consoleWeb: { dir: CONSOLE_DIR, limits: { attempts: 1000 } },
    console: new FolderConsoleBackend({ dir, reload: async () => ({ verdicts: [] }) }),
  });
}, 120_000);

afterAll(async () => {
  for (const w of opened) await w.context.close().catch(() => {});
  await browser?.close();
  await gw?.close();
  await Promise.all([sim?.close(), redis?.stop()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('console playground', () => {
  it('sends through the real pipeline: the failover trail, meta, and a log entry marked as from the console', async () => {
    const w = await signedIn();
    await send(w, 'failover', 'hello from the playground');
    const attempts = w.page.locator('ol.attempts li');
    await attempts.nth(1).waitFor();
    expect(await attempts.count()).toBe(2);
    expect(await attempts.nth(0).textContent()).toMatch(/error.*fail-503/);
    expect(await attempts.nth(1).textContent()).toMatch(/success.*claude-haiku-4-5/);
    await expect(w.page.locator('pre.answer').textContent()).resolves.toContain(
      'Simulated anthropic/claude-haiku-4-5 reply: hello from the playground',
    );
    const meta = await w.page.locator('dl.fields').textContent();
    for (const field of ['duration_ms', 'usage', 'cost_usd', 'cache', 'request_log_id'])
      expect(meta).toContain(field);
    expect(w.page.url()).toContain('#/playground?workflow=failover');
    await w.page.screenshot({ path: screenshotPath('console-playground.png'), fullPage: true });

    const id = (await w.page
      .locator('dl.fields div')
      .filter({ hasText: 'request_log_id' })
      .locator('dd')
      .textContent())!;
    await gw.gateway.state.flush();
    const res = await fetch(`${gw.url}/v1/request-logs?workflow=failover`, {
      headers: { authorization: `Bearer ${PLAY_KEY}` },
    });
    const entry = ((await res.json()) as { data: Record<string, unknown>[] }).data.find(
      (e) => e.request_log_id === id,
    );
    expect(entry).toMatchObject({
      details: { source: 'console' },
      path: '/console/api/playground',
      surface: 'native',
      status: 'success',
      used_model: 'claude-haiku-4-5',
    });
    expect(entry?.attempts).toHaveLength(2);

    // The entry's page says where it came from and leads back to the playground with its input.
    await w.page.goto(`${gw.url}/console/#/logs?workflow=failover`);
    await expect(w.page.locator('main tbody tr').first().textContent()).resolves.toContain(
      'request · console',
    );
    await w.page.locator('main tbody a').first().click();
    await w.page.getByText('"source": "console"').waitFor();
    await w.page.getByRole('link', { name: 'Open in playground' }).click();
    await w.page.getByRole('heading', { name: 'Playground' }).waitFor();
    expect(await w.page.getByLabel('Workflow').inputValue()).toBe('failover');
    expect(await w.page.getByLabel('User message').inputValue()).toBe('hello from the playground');
    await clean(w);
  });

  it('streams an answer: the text as it arrives, then the trail and meta; the log entry is a console stream', async () => {
    const w = await signedIn();
    await w.page.goto(`${gw.url}/console/#/playground?workflow=failover`);
    await w.page.getByLabel('User message').fill('stream it please');
    await w.page.getByLabel('Stream the answer').check();
    await w.page.getByRole('button', { name: 'Send' }).click();
    const attempts = w.page.locator('ol.attempts li');
    await attempts.nth(1).waitFor();
    expect(await attempts.nth(0).textContent()).toContain('fail-503');
    expect(await attempts.nth(1).textContent()).toContain('claude-haiku-4-5');
    await expect(w.page.locator('pre.answer').textContent()).resolves.toContain(
      'Simulated anthropic/claude-haiku-4-5 reply: stream it please',
    );
    const meta = (await w.page.locator('dl.fields').textContent())!;
    expect(meta).toMatch(/ttft_ms \(this browser\)\d+/);
    const id = (await w.page
      .locator('dl.fields div')
      .filter({ hasText: 'request_log_id' })
      .locator('dd')
      .textContent())!;
    await gw.gateway.state.flush();
    const res = await fetch(`${gw.url}/v1/request-logs?workflow=failover`, {
      headers: { authorization: `Bearer ${PLAY_KEY}` },
    });
    const entry = ((await res.json()) as { data: Record<string, unknown>[] }).data.find(
      (e) => e.request_log_id === id,
    );
    expect(entry).toMatchObject({ details: { source: 'console' }, stream: true, status: 'success' });
    await clean(w);
  });

  it('copies the input as code for every client, naming the workflow and never the key', async () => {
    const w = await signedIn();
    await w.page.goto(`${gw.url}/console/#/playground?workflow=chat`);
    await w.page.getByLabel('System message').fill("Answer in one line; it's fine");
    await w.page.getByLabel('User message').fill('What is a failover?');
    const texts: Record<string, string> = {};
    for (const label of [
      'curl (/v1/ai)',
      'Python openai',
      'JS openai',
      'Anthropic SDK (Python)',
      'fetch (/v1/ai native)',
    ]) {
      await w.page.getByLabel('Language').selectOption({ label });
      texts[label] = (await w.page.locator('pre.code').textContent())!;
    }
    for (const [label, code] of Object.entries(texts)) {
      expect(code, label).toContain('"chat"');
      expect(code, label).toContain('What is a failover?');
      expect(code, label).toContain('SWITCHYARD_API_KEY');
      expect(code, label).not.toMatch(/sy_live_/);
    }
    expect(texts['curl (/v1/ai)']).toContain(`it'\\''s fine`);
    expect(texts['Python openai']).toContain('client.chat.completions.create(');
    expect(texts['Anthropic SDK (Python)']).toContain('client.messages.create(');
    await clean(w);
  });

  it('a session whose key lacks the ai scope gets a clear 403; a write without the CSRF token is refused', async () => {
    const w = await openPage(browser);
    opened.push(w);
    // The one-time link signs in the suite's console-only key.
    await w.page.goto(`${gw.url}/console/#/link/${await gw.gateway.consoleWeb!.oneTimeLink()}`);
    await w.page.getByRole('heading', { name: 'Workflows' }).waitFor();
    await send(w, 'chat', 'hello');
    await w.page.getByRole('alert').filter({ hasText: 'lacks the "ai" scope' }).waitFor();
    expect(await w.page.getByRole('alert').textContent()).toContain('insufficient_permission');
    expect(await w.page.locator('ol.attempts').count()).toBe(0);
    const bare = await w.page.evaluate(async () => {
      const res = await fetch('api/playground', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ workflow: 'chat', messages: [{ role: 'user', content: 'x' }] }),
      });
      return [res.status, await res.text()] as const;
    });
    expect(bare[0]).toBe(403);
    expect(bare[1]).toContain('CSRF');
    await clean(w);
  });

  it('shows structured output checked against the schema, with the path an off-schema attempt failed at', async () => {
    const w = await signedIn();
    await send(w, 'structured', 'Who are you?');
    await w.page.locator('ol.attempts li').nth(1).waitFor();
    await w.page.getByText("valid against the workflow's schema").waitFor();
    expect(await w.page.locator('ul.schema-failures li').allTextContents()).toEqual([
      "compat/llama: / must have required property 'name'",
    ]);
    expect(JSON.parse((await w.page.locator('pre.answer').textContent())!)).toHaveProperty('name');
    await clean(w);
  });

  it('renders a hostile answer as text: nothing runs', async () => {
    const w = await signedIn();
    await send(w, 'chat', HOSTILE_ANSWER);
    await expect(w.page.locator('pre.answer').textContent()).resolves.toContain(HOSTILE_ANSWER);
    expect(await w.page.locator('main img, main script').count()).toBe(0);
    // Streamed, the chunks are shown as they arrive: as text too.
    await w.page.getByLabel('Stream the answer').check();
    await w.page.getByRole('button', { name: 'Send' }).click();
    await w.page.getByRole('heading', { name: /Answer/ }).waitFor();
    await expect(w.page.locator('pre.answer').textContent()).resolves.toContain(HOSTILE_ANSWER);
    expect(await w.page.locator('main img, main script').count()).toBe(0);
    await clean(w);
  });

  it('compares the same input on three workflows, and on each slot of one workflow pinned, side by side', async () => {
    const w = await signedIn();
    await w.page.goto(`${gw.url}/console/#/playground?workflow=chat&compare=failover,structured`);
    await w.page.getByRole('heading', { name: 'Compare' }).waitFor();
    await w.page.getByLabel('User message').fill('compare me');
    await w.page.getByRole('button', { name: 'Compare', exact: true }).click();
    const columns = w.page.locator('.compare > section');
    await columns.nth(2).waitFor();
    expect(await columns.count()).toBe(3);
    expect(await columns.nth(0).getAttribute('aria-label')).toBe('Compared: chat');
    expect(await columns.nth(0).textContent()).toContain('Simulated openai/gpt-4o-mini reply: compare me');
    // Unpinned, the failover workflow fails over as it would for an application.
    expect(await columns.nth(1).locator('ol.attempts li').count()).toBe(2);
    expect(await columns.nth(2).getAttribute('aria-label')).toBe('Compared: structured');

    // Each slot pinned: the primary alone (503, no failover) beside the backup alone.
    await w.page.getByLabel('Each of its slots').check();
    expect(w.page.url()).toContain('compare=slots');
    await w.page.getByLabel('Workflow').selectOption('failover');
    await w.page.goto(`${gw.url}/console/#/playground?workflow=failover&compare=slots`);
    await w.page.getByLabel('User message').fill('pin me');
    await w.page.getByRole('button', { name: 'Compare', exact: true }).click();
    await w.page.locator('.compare > section').nth(1).waitFor();
    const [primary, backup] = [columns.nth(0), columns.nth(1)];
    expect(await columns.count()).toBe(2);
    expect(await primary.getAttribute('aria-label')).toBe('Compared: primary: oai/fail-503');
    expect(await primary.locator('ol.attempts li').count()).toBe(1);
    expect(await primary.textContent()).toMatch(/error/);
    expect(await backup.getAttribute('aria-label')).toBe('Compared: backup 1: claude/claude-haiku-4-5');
    expect(await backup.locator('ol.attempts li').count()).toBe(1);
    expect(await backup.textContent()).toContain('Simulated anthropic/claude-haiku-4-5 reply: pin me');
    for (const scheme of ['light', 'dark'] as const) {
      await w.page.emulateMedia({ colorScheme: scheme });
      expect(await accessibilityProblems(w.page), scheme).toEqual([]);
    }
    await clean(w);

    // The pinned requests are logged as the console's, with their slot; a slot that does not exist is 400.
    await gw.gateway.state.flush();
    const logs = (await fetch(`${gw.url}/v1/request-logs?workflow=failover`, {
      headers: { authorization: `Bearer ${PLAY_KEY}` },
    }).then((r) => r.json())) as { data: { details?: Record<string, unknown>; attempts: unknown[] }[] };
    const pinned = logs.data.filter((e) => e.details?.pinned_slot !== undefined);
    expect(pinned.map((e) => e.details?.pinned_slot).sort()).toEqual([0, 1]);
    expect(pinned.every((e) => e.attempts.length === 1)).toBe(true);
    const bad = await fetch(`${gw.url}/console/api/playground?slot=5`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${PLAY_KEY}` },
      body: JSON.stringify({ workflow: 'failover', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: 'invalid_request', param: 'slot' });
  }, 60_000);

  it('sends every request type a workflow has through the real pipeline, with the field each type takes', async () => {
    const w = await signedIn();
    const cases = [
      ['complete', 'Prompt', /a complete request/],
      ['embed', 'Input', /"embedding"/],
      ['image', 'Prompt', /"b64_json"|"url"/],
      ['speech', 'Text to speak', /audio|"data"/],
      ['vision', 'User message', /Simulated|"choices"/],
    ] as const;
    const seen: string[] = [];
    for (const [wf, label, shape] of cases) {
      await w.page.goto(`${gw.url}/console/#/playground?workflow=${wf}`);
      await w.page.getByLabel(label, { exact: true }).waitFor();
      expect(await w.page.getByLabel('System message').count()).toBe(wf === 'vision' ? 1 : 0);
      if (wf === 'vision') await w.page.getByLabel('Image URL').fill(PNG);
      await w.page.getByLabel(label, { exact: true }).fill(`a ${wf} request`);
      await w.page.getByRole('button', { name: 'Send' }).click();
      const status = w.page.locator('#answer-h .badge');
      await status.waitFor();
      const answer = (await w.page.locator('pre.answer').textContent()) ?? '';
      seen.push(`${wf}: ${await status.textContent()}`);
      expect(await status.textContent(), `${wf}: ${answer.slice(0, 200)}`).toBe('success');
      expect(answer).toMatch(shape);
    }
    console.log(`request types: ${seen.join(', ')}`);
    // The vision form (image URL field) with its answer, light and dark.
    for (const scheme of ['light', 'dark'] as const) {
      await w.page.emulateMedia({ colorScheme: scheme });
      expect(await accessibilityProblems(w.page), scheme).toEqual([]);
    }
    await gw.gateway.state.flush();
    const logs = (await fetch(`${gw.url}/v1/request-logs?limit=50`, {
      headers: { authorization: `Bearer ${PLAY_KEY}` },
    }).then((r) => r.json())) as { data: { workflow: string; details?: Record<string, unknown> }[] };
    for (const [wf] of cases)
      expect(
        logs.data.some((e) => e.workflow === wf && e.details?.source === 'console'),
        wf,
      ).toBe(true);
    // Open in playground from an entry brings back each type's input: an embedding's input, a vision image.
    for (const [wf, label] of [
      ['embed', 'Input'],
      ['vision', 'User message'],
    ] as const) {
      await w.page.goto(`${gw.url}/console/#/logs?workflow=${wf}`);
      await w.page.locator('main tbody a').first().click();
      await w.page.getByRole('link', { name: 'Open in playground' }).click();
      await w.page.getByRole('heading', { name: 'Playground' }).waitFor();
      await w.page.getByLabel(label, { exact: true }).waitFor();
      expect(await w.page.getByLabel(label, { exact: true }).inputValue()).toBe(`a ${wf} request`);
      if (wf === 'vision') expect(await w.page.getByLabel('Image URL').inputValue()).toBe(PNG);
    }
    await clean(w);
  }, 60_000);

  it('has no serious or critical accessibility problem, light and dark, before and after an answer', async () => {
    const found: string[] = [];
    for (const scheme of ['light', 'dark'] as const) {
      const w = await signedIn(scheme);
      await w.page.goto(`${gw.url}/console/#/playground`);
      await w.page.getByLabel('Workflow').waitFor();
      found.push(...(await accessibilityProblems(w.page)).map((p) => `${scheme} empty: ${p}`));
      await send(w, 'failover', 'hello');
      await w.page.locator('ol.attempts li').nth(1).waitFor();
      found.push(...(await accessibilityProblems(w.page)).map((p) => `${scheme} answered: ${p}`));
    }
    expect(found).toEqual([]);
  }, 60_000);
});
