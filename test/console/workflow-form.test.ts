/**
 * The workflow form in a real browser (Debian's chromium through playwright-core) against a real
 * gateway whose console API writes a config folder, as embedded mode does: every Workflow field
 * written and read back, the schema's refusal shown at its field, the YAML view and its export,
 * an edit, and axe in light and dark.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type RunningRedis, startRedis } from '#devkit/redis';
import { FolderConsoleBackend } from '#gateway/console/index';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { baseConfig, NO_AI_SCOPE_KEY, PROJECT_ID, workflow } from '../harness/manifests.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import { accessibilityProblems, launch, openPage, type Watched } from './browser.ts';
import { CONSOLE_DIR, ensureBundle } from './bundle.ts';
import { consoleApi } from './helpers.ts';

let redis: RunningRedis;
let sim: Simulator;
let gw: RunningGateway;
let browser: Browser;
let dir: string;
const opened: Watched[] = [];

const manifests = (simUrl: string) => [
  ...baseConfig(simUrl),
  workflow('chat', { provider: 'oai', model: 'gpt-4o-mini' }),
];

async function signedIn(scheme: 'light' | 'dark' = 'light'): Promise<Watched> {
  const w = await openPage(browser, scheme);
  opened.push(w);
  const link = await gw.gateway.consoleWeb!.oneTimeLink();
  await w.page.goto(`${gw.url}/console/#/link/${link}`);
  await w.page.getByRole('heading', { name: 'Workflows' }).waitFor();
  return w;
}

async function clean(w: Watched): Promise<void> {
  expect(await w.violations()).toEqual([]);
  expect(w.problems).toEqual([]);
}

beforeAll(async () => {
  await ensureBundle();
  [redis, sim, browser] = await Promise.all([startRedis(), startSimulator(), launch()]);
  dir = await mkdtemp(join(tmpdir(), 'sy-console-form-'));
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

describe('the workflow form', () => {
  it('creates a workflow with every field, shows its YAML and exports it', async () => {
    const w = await signedIn();
    const { page } = w;
    await page.getByRole('link', { name: 'New workflow' }).click();
    await page.getByRole('heading', { name: 'New workflow' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('summarize');
    await page.getByLabel('Description').fill('Summaries <b>for</b> support');
    await page.getByLabel('Request type').selectOption('chat');
    await page.getByLabel('Primary provider').fill('oai');
    await page.getByLabel('Primary model').fill('gpt-4o-mini');
    await page.getByRole('button', { name: 'Add backup' }).click();
    await page.getByLabel('Backup 1 provider').fill('claude');
    await page.getByLabel('Backup 1 model').fill('claude-haiku-4-5');
    await page.getByLabel('System instructions').fill('Be brief.');
    await page.getByLabel('Cache fields').fill('metadata.customer_id');
    await page
      .getByLabel('Structured output (JSON)')
      .fill('{"schema":{"type":"object","properties":{"summary":{"type":"string"}},"required":["summary"]}}');
    await page.getByLabel('Response cache (JSON)').fill('{"ttlSeconds":120}');
    await page.getByLabel('Test mode').check();
    const yaml = await page.locator('pre.yaml').textContent();
    expect(yaml).toContain('kind: Workflow');
    expect(yaml).toContain('systemInstructions: "Be brief."');
    expect(yaml).toContain('- provider: claude');
    expect(yaml).toContain('description: "Summaries <b>for</b> support"');
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download YAML' }).click(),
    ]);
    expect(download.suggestedFilename()).toBe('workflow-summarize.yaml');
    expect(await readFile((await download.path())!, 'utf8')).toBe(yaml);

    expect(await accessibilityProblems(page)).toEqual([]);
    await page.getByRole('button', { name: 'Create' }).click();
    await page.getByRole('heading', { name: 'Workflow summarize', exact: true }).waitFor();
    const stored = await consoleApi(gw.url, NO_AI_SCOPE_KEY, PROJECT_ID).get('summarize');
    expect(stored.body).toMatchObject({
      name: 'summarize',
      description: 'Summaries <b>for</b> support',
      provider: 'oai',
      model: 'gpt-4o-mini',
      backup_1_provider: 'claude',
      backup_1_model: 'claude-haiku-4-5',
      systemInstructions: 'Be brief.',
      cacheFields: ['metadata.customer_id'],
      structuredOutput: { schema: { type: 'object', required: ['summary'] } },
      responseCache: { ttlSeconds: 120 },
      testMode: true,
    });
    await clean(w);
  });

  it("shows the schema's refusal at its field, and a field that is not JSON before sending", async () => {
    const w = await signedIn('dark');
    const { page } = w;
    await page.goto(`${gw.url}/console/#/workflows/new`);
    await page.getByLabel('Name', { exact: true }).fill('broken');
    await page.getByLabel('Primary provider').fill('Not_A_Provider');
    await page.getByLabel('Primary model').fill('gpt-4o-mini');
    await page.getByLabel('Session memory (JSON)').fill('{not json');
    await page.getByRole('button', { name: 'Create' }).click();
    await expect
      .poll(() => page.getByLabel('Session memory (JSON)').getAttribute('aria-invalid'))
      .toBe('true');
    await expect.poll(() => page.locator('#sessionMemory-error').textContent()).toMatch(/not JSON/);
    await page.getByLabel('Session memory (JSON)').fill('');
    await page.getByRole('button', { name: 'Create' }).click();
    await expect.poll(() => page.getByLabel('Primary provider').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#provider-error').textContent()).toMatch(/provider/);
    expect((await consoleApi(gw.url, NO_AI_SCOPE_KEY, PROJECT_ID).get('broken')).status).toBe(404);
    expect(await accessibilityProblems(page)).toEqual([]);
    await clean(w);
  });

  it('edits a workflow the console wrote; the form starts from what is stored', async () => {
    const w = await signedIn('dark');
    const { page } = w;
    await page.goto(`${gw.url}/console/#/workflows/summarize`);
    await page.getByRole('link', { name: 'Edit' }).click();
    await page.getByRole('heading', { name: 'Edit workflow summarize' }).waitFor();
    await expect.poll(() => page.getByLabel('System instructions').inputValue()).toBe('Be brief.');
    expect(await page.getByLabel('Name', { exact: true }).isDisabled()).toBe(true);
    await page.getByRole('button', { name: 'Remove backup 1' }).click();
    // The compiler's refusal (a model the provider does not offer) lands at the model field.
    await page.getByLabel('Primary model').fill('gpt-4.1-mini');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect.poll(() => page.getByLabel('Primary model').getAttribute('aria-invalid')).toBe('true');
    expect(await page.locator('#model-error').textContent()).toMatch(/ModelNotFound/);
    expect(await accessibilityProblems(page)).toEqual([]);
    await page.getByLabel('Primary model').fill('slow-300');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('heading', { name: 'Workflow summarize', exact: true }).waitFor();
    const stored = await consoleApi(gw.url, NO_AI_SCOPE_KEY, PROJECT_ID).get('summarize');
    expect(stored.body).toMatchObject({ model: 'slow-300', systemInstructions: 'Be brief.' });
    expect(stored.body).not.toHaveProperty('backup_1_provider');
    await clean(w);
  });
});
