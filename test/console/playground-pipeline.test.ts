/**
 * The playground's backend-pipeline simulation in a real browser against a real gateway on a real
 * Redis, the provider simulator and a real webhook receiver: the AI step runs through the pipeline,
 * the task.ai_generated webhook is built and signed (the signature verifies with the Standard
 * Webhooks library) but never sent, the simulated backend answers after the injected delay with an
 * `id`, and the merged result is shown as the WebSocket `response` event carries it.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type RunningRedis, startRedis } from '#devkit/redis';
import { FolderConsoleBackend } from '#gateway/console/index';
import { type Json, WEBHOOK_SECRET } from '../async/harness.ts';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { apiKey, baseConfig, PROJECT, secret, workflow } from '../harness/manifests.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import { startReceiver } from '../webhooks/receiver.ts';
import { accessibilityProblems, launch, openPage, type Watched } from './browser.ts';
import { CONSOLE_DIR, ensureBundle } from './bundle.ts';

const KEY = 'sy_live_PipelineSimKey0123456789abcdefghijk';
const HOSTILE = '<img src=x onerror="window.__pwned=1">';
/** The simulated backend's delay, injected small (the default is 1.5 s). */
const BACKEND_MS = 300;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let redis: RunningRedis;
let sim: Simulator;
let gw: RunningGateway;
let browser: Browser;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let dir: string;
const opened: Watched[] = [];

function manifests(simUrl: string, hookUrl: string) {
  return [
    ...baseConfig(simUrl).map((o) =>
      o.kind === 'Project' && o.metadata.name === PROJECT
        ? {
            ...o,
            spec: {
              requestLogs: { bodies: true, maxEntries: 1000 },
              webhooks: [{ url: hookUrl, secretRef: { name: 'hook-secret', key: 'secret' } }],
              outboundFetch: { allowPrivateNetworks: true },
            },
          }
        : o,
    ),
    secret('hook-secret', { secret: WEBHOOK_SECRET }),
    ...apiKey('pipeline', KEY, { scopes: ['ai', 'console'] }),
    workflow('orders', { provider: 'oai', model: 'gpt-4o-mini', eventName: 'order.created' }),
    workflow('chat', { provider: 'oai', model: 'gpt-4o-mini' }),
  ];
}

const post = async (path: string, body: unknown) => {
  const r = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
    body: JSON.stringify(body),
  });
  return { status: r.status, body: (await r.json()) as Json };
};
const ask = (wf: string, content: string) => ({ workflow: wf, messages: [{ role: 'user', content }] });

beforeAll(async () => {
  await ensureBundle();
  [redis, sim, browser, receiver] = await Promise.all([
    startRedis(),
    startSimulator(),
    launch(),
    startReceiver(WEBHOOK_SECRET),
  ]);
  dir = await mkdtemp(join(tmpdir(), 'sy-console-pipeline-'));
  const objects = manifests(sim.url, receiver.url);
  await writeFile(join(dir, 'config.yaml'), objects.map((m) => stringify(m)).join('---\n'));
  gw = await startGateway(objects, {
    redisUrl: redis.url,
    consoleWeb: { dir: CONSOLE_DIR, limits: { attempts: 1000 }, simulatedBackendMs: BACKEND_MS },
    console: new FolderConsoleBackend({ dir, reload: async () => ({ verdicts: [] }) }),
  });
}, 120_000);

afterAll(async () => {
  for (const w of opened) await w.context.close().catch(() => {});
  await browser?.close();
  await gw?.close();
  await Promise.all([sim?.close(), redis?.stop(), receiver?.close()]);
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('playground: backend-pipeline simulation', () => {
  it('runs the AI step, signs the webhook without sending it, waits for the backend and merges its id', async () => {
    const r = await post('/console/api/playground/pipeline', ask('orders', 'ship order 42'));
    expect(r.status).toBe(200);
    const { ai_response: ai, webhook, backend, response } = r.body;
    expect(ai.meta).toMatchObject({ status: 'success', workflow: 'orders', used_provider: 'oai' });
    expect(typeof ai.data.choices[0].message.content).toBe('string');
    // The webhook as the dispatcher would send it, verifiable by a receiver with the project's secret.
    const payload = JSON.parse(webhook.payload);
    expect(payload).toMatchObject({
      type: 'task.ai_generated',
      event: 'order.created',
      callback_required: true,
      ai_response: ai,
    });
    expect(payload.callback_url).toBe(`${gw.url}/v1/callback/${payload.channel_id}`);
    expect(webhook.endpoints).toHaveLength(1);
    const headers = webhook.endpoints[0].headers;
    expect(headers['service-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(new Webhook(WEBHOOK_SECRET).verify(webhook.payload, headers)).toMatchObject({
      type: 'task.ai_generated',
    });
    // The backend: the injected delay, an id injected into data.
    expect(backend.delay_ms).toBe(BACKEND_MS);
    expect(backend.waited_ms).toBeGreaterThanOrEqual(BACKEND_MS - 5);
    expect(backend.data.id).toMatch(UUID);
    // Merged as a real callback merges: the backend's data over the generated data.
    expect(response.event).toBe('response');
    expect(response.topic).toMatch(new RegExp(`^ai_response:[^:]+:${payload.channel_id}$`));
    expect(response.payload.data).toEqual({ ...ai.data, id: backend.data.id });
    expect(response.payload.meta).toEqual(ai.meta);
    console.log(`pipeline simulation: backend waited ${backend.waited_ms} ms (delay ${BACKEND_MS} ms)`);
    // Its request-log entry is the console's, marked as a simulation.
    await gw.gateway.state.flush();
    const logs = await fetch(`${gw.url}/v1/request-logs?workflow=orders`, {
      headers: { authorization: `Bearer ${KEY}` },
    }).then((x) => x.json() as Promise<Json>);
    const entry = logs.data.find((e: Json) => e.request_log_id === ai.meta.request_log_id);
    expect(entry).toMatchObject({
      status: 'success',
      details: { source: 'console', simulation: 'backend_pipeline' },
    });
  });

  it('refuses a workflow without an event name, and the ordinary send still refuses a pipeline workflow', async () => {
    const plain = await post('/console/api/playground/pipeline', ask('chat', 'hi'));
    const sync = await post('/console/api/playground', ask('orders', 'hi'));
    expect(plain.status).toBe(400);
    expect(plain.body).toMatchObject({ error: 'invalid_request', param: 'workflow' });
    expect(sync.status).toBe(400);
    expect(sync.body.error).toBe('model_not_supported');
  });

  it('in the browser: the three simulated steps, hostile text inert, accessible light and dark, nothing sent', async () => {
    const w = await openPage(browser, 'light');
    opened.push(w);
    await w.page.goto(`${gw.url}/console/`);
    await w.page.getByLabel('API key').fill(KEY);
    await w.page.getByRole('button', { name: 'Sign in' }).click();
    await w.page.getByRole('heading', { name: 'Workflows' }).waitFor();
    await w.page.goto(`${gw.url}/console/#/playground?workflow=orders`);
    await w.page.getByText('Backend pipeline (event order.created)').waitFor();
    await w.page.getByLabel('User message').fill(HOSTILE);
    const started = Date.now();
    await w.page.getByRole('button', { name: 'Send' }).click();
    await w.page.getByRole('heading', { name: /3\. WebSocket response event/ }).waitFor();
    expect(Date.now() - started).toBeGreaterThanOrEqual(BACKEND_MS);
    expect(await w.page.locator('pre.sim-payload').textContent()).toContain('"callback_required": true');
    expect(await w.page.locator('.simulation').textContent()).toContain('service-signature');
    const merged = JSON.parse((await w.page.locator('pre.sim-response').textContent()) ?? '{}');
    expect(merged.data.id).toMatch(UUID);
    expect(JSON.stringify(merged.data.choices)).toContain('onerror');
    expect(await w.page.locator('.simulation img').count()).toBe(0);
    for (const scheme of ['light', 'dark'] as const) {
      await w.page.emulateMedia({ colorScheme: scheme });
      expect(await accessibilityProblems(w.page), scheme).toEqual([]);
    }
    expect(await w.violations()).toEqual([]);
    expect(w.problems).toEqual([]);
    expect(await w.page.evaluate('window.__pwned')).toBeUndefined();
    // Nothing reached the project's webhook receiver, and no delivery was attempted.
    await gw.gateway.state.flush();
    const attempts = await fetch(`${gw.url}/v1/request-logs?type=webhook_attempt`, {
      headers: { authorization: `Bearer ${KEY}` },
    }).then((x) => x.json() as Promise<Json>);
    expect(attempts.data).toEqual([]);
    expect(receiver.deliveries).toEqual([]);
  });
});
