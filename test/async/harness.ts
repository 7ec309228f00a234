import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { stringify } from 'yaml';
import { createGateway, type Gateway, type GatewayOptions } from '#gateway/gateway';
import { SnapshotStore } from '#gateway/snapshot/store';
import { loadInto } from '../../embedded/config-source.ts';
import { API_KEY, apiKey, project, secret, workflow } from '../harness/manifests.ts';

/** startGateway (test/harness) with the async settings exposed. */
export interface AsyncGateway {
  url: string;
  gateway: Gateway;
  close(): Promise<void>;
}

export async function startAsyncGateway(
  manifests: readonly object[],
  opts: Pick<GatewayOptions, 'state' | 'now' | 'async' | 'http'> = {},
): Promise<AsyncGateway> {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-async-'));
  const sealKey = randomBytes(32);
  const logger = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
  const store = new SnapshotStore(sealKey);
  await writeFile(join(dir, 'config.yaml'), manifests.map((m) => stringify(m)).join('---\n'));
  await loadInto(dir, store, sealKey, logger);
  const gateway = createGateway(store, { logger, ...opts });
  const { url } = await gateway.listen('127.0.0.1', 0, 0);
  return {
    url,
    gateway,
    async close() {
      await gateway.close(1000);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A clock tests move by hand. */
export function manualClock(start = Date.now()) {
  let t = start;
  return {
    now: () => t,
    advance(ms: number) {
      t += ms;
    },
  };
}

export const CONSOLE_KEY = 'sy_live_AsyncConsoleAndAiKey0123456789abcd';
export const OTHER_PROJECT_KEY = 'sy_live_AsyncOtherProjectKey0123456789abc';
export const WEBHOOK_SECRET = `whsec_${Buffer.from('switchyard-test-webhook-secret-32b').toString('base64')}`;

/**
 * A project with a plain and a pipeline workflow in test mode (no provider called), a key with
 * ai+console scopes, another project's key, and optional webhook receivers.
 */
export function asyncConfig(
  opts: { webhooks?: { url: string; events?: string[]; secret?: string }[]; allowPrivate?: boolean } = {},
) {
  const hooks = opts.webhooks ?? [];
  return [
    project('app', {
      ...(hooks.length
        ? {
            webhooks: hooks.map((h, i) => ({
              url: h.url,
              secretRef: { name: 'hook-secret', key: `s${i}` },
              ...(h.events ? { events: h.events } : {}),
            })),
          }
        : {}),
      ...(opts.allowPrivate === undefined
        ? {}
        : { outboundFetch: { allowPrivateNetworks: opts.allowPrivate } }),
    }),
    secret('hook-secret', Object.fromEntries(hooks.map((h, i) => [`s${i}`, h.secret ?? WEBHOOK_SECRET]))),
    ...apiKey('main', API_KEY),
    ...apiKey('admin', CONSOLE_KEY, { scopes: ['ai', 'console'] }),
    project('other'),
    ...apiKey('other', OTHER_PROJECT_KEY, { project: 'other' }),
    secret('tm-cred', { apiKey: 'sk-unused' }),
    {
      apiVersion: 'switchyard.dev/v1alpha1',
      kind: 'Provider',
      metadata: { name: 'tm', namespace: 'team' },
      spec: {
        type: 'openai',
        credentials: { secretRef: { name: 'tm-cred', key: 'apiKey' } },
        models: [{ name: 'gpt-4o-mini', requestTypes: ['chat'] }],
      },
    },
    workflow('summary', { requestType: 'chat', provider: 'tm', model: 'gpt-4o-mini', testMode: true }),
    workflow('moderation', {
      requestType: 'chat',
      provider: 'tm',
      model: 'gpt-4o-mini',
      testMode: true,
      eventName: 'content.moderate',
    }),
  ];
}

// Response bodies as tests read them: any field, checked by the assertions.
// biome-ignore lint/suspicious/noExplicitAny: test-side JSON
export type Json = any;

export interface Ack {
  message: string;
  status: string;
  channel_id: string;
  session_id: string | null;
  ws_token: string;
  websocket_url: string;
  websocket_channel: string;
}

export async function postJson(
  url: string,
  key: string | undefined,
  body: unknown,
): Promise<{ status: number; body: Json }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

export async function getJson(url: string, key: string): Promise<{ status: number; body: Json }> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, body: await res.json() };
}

export const ask = (workflowName: string, extra: Record<string, unknown> = {}) => ({
  workflow: workflowName,
  messages: [{ role: 'user', content: 'Summarise: the quick brown fox.' }],
  ...extra,
});

/** Polls until `check` returns a value (real time, short steps). */
export async function until<T>(
  check: () => Promise<T | undefined>,
  timeoutMs = 10_000,
  stepMs = 20,
): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, stepMs));
  }
}

export async function waitState(url: string, channelId: string, state: string, key = API_KEY): Promise<Json> {
  return until(async () => {
    const r = await getJson(`${url}/v1/ai/async/${channelId}`, key);
    return r.body.status === state ? r.body : undefined;
  });
}
