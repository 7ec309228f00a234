/**
 * The operations port after real traffic: Prometheus metrics with the documented names and labels,
 * an exposition that `promtool check metrics` accepts, and the probes.
 *
 * promtool is required (CI installs Debian's `prometheus` package); the test fails when it is absent.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY, type CompatEnv, PROJECT_ID, rawJson, startCompatEnv } from './helpers.ts';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the text exposition format into samples (comments skipped). */
function parseExposition(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) throw new Error(`unparseable metrics line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g))
      labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

function locatePromtool(): string | undefined {
  const candidates = [
    process.env.PROMTOOL,
    ...(process.env.PATH ?? '').split(delimiter).map((d) => (d ? join(d, 'promtool') : undefined)),
    '/usr/bin/promtool',
  ];
  for (const c of candidates) {
    if (!c) continue;
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      // next
    }
  }
  return undefined;
}

let env: CompatEnv;
let samples: Sample[];
let exposition: string;

const find = (name: string, labels: Record<string, string>): Sample[] =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
const value = (name: string, labels: Record<string, string>): number => {
  const found = find(name, labels);
  if (found.length !== 1)
    throw new Error(`expected one ${name} sample with ${JSON.stringify(labels)}, found ${found.length}`);
  return found[0]!.value;
};

async function scrape(): Promise<string> {
  const res = await fetch(`${env.gw.metricsUrl}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
  return res.text();
}

const PROJECT = { project: PROJECT_ID };
const CHAT = { ...PROJECT, workflow: 'chat', provider: 'oai', model: 'gpt-4o-mini' };

beforeAll(async () => {
  env = await startCompatEnv();
  const sdk = env.client();
  const user = [{ role: 'user' as const, content: 'count me in the metrics' }];

  await sdk.chat.completions.create({ model: 'chat', messages: user });
  const stream = await sdk.chat.completions.create({
    model: 'chat',
    messages: user,
    stream: true,
    stream_options: { include_usage: true },
  });
  const chunks: ChatCompletionChunk[] = [];
  for await (const c of stream) chunks.push(c);
  expect(chunks.length).toBeGreaterThan(0);
  await env.client({ prefix: '/api/v1' }).chat.completions.create({ model: 'failover-chat', messages: user });
  await sdk.chat.completions.create({ model: 'all-fail', messages: user }).catch(() => undefined);
  await sdk.chat.completions.create({ model: 'no-such-workflow', messages: user }).catch(() => undefined);
  await sdk.embeddings.create({ model: 'embed', input: 'embed me', encoding_format: 'float' });
  const native = await rawJson(env.gw.url, '/v1/ai', { body: { workflow: 'chat', messages: user } });
  expect(native.status).toBe(200);

  exposition = await scrape();
  samples = parseExposition(exposition);
});
afterAll(async () => {
  await env?.close();
});

describe('gateway metrics after traffic', () => {
  it('switchyard_requests_total by surface, project, workflow, provider, model and outcome', () => {
    const name = 'switchyard_requests_total';
    for (const s of find(name, {}))
      expect(Object.keys(s.labels).sort()).toEqual([
        'model',
        'outcome',
        'project',
        'provider',
        'surface',
        'workflow',
      ]);
    // The plain call and the stream.
    expect(value(name, { surface: 'compat', ...CHAT, outcome: 'success' })).toBe(2);
    expect(value(name, { surface: 'native', ...CHAT, outcome: 'success' })).toBe(1);
    // Failover: counted under the provider that answered.
    expect(
      value(name, {
        surface: 'compat',
        ...PROJECT,
        workflow: 'failover-chat',
        provider: 'claude',
        model: 'claude-haiku-4-5',
        outcome: 'success',
      }),
    ).toBe(1);
    expect(
      value(name, {
        surface: 'compat',
        ...PROJECT,
        workflow: 'all-fail',
        provider: '',
        outcome: 'upstream_error',
      }),
    ).toBe(1);
    expect(find(name, { surface: 'compat', ...PROJECT, outcome: 'client_error' }).length).toBeGreaterThan(0);
    expect(
      value(name, {
        surface: 'compat',
        ...PROJECT,
        workflow: 'embed',
        provider: 'oai',
        model: 'gpt-4o-mini',
        outcome: 'success',
      }),
    ).toBe(1);
  });

  it('switchyard_request_duration_seconds is a histogram by surface and outcome', () => {
    const count = value('switchyard_request_duration_seconds_count', {
      surface: 'compat',
      outcome: 'success',
    });
    expect(count).toBe(4);
    expect(
      value('switchyard_request_duration_seconds_sum', { surface: 'compat', outcome: 'success' }),
    ).toBeGreaterThan(0);
    expect(
      value('switchyard_request_duration_seconds_bucket', {
        surface: 'compat',
        outcome: 'success',
        le: '+Inf',
      }),
    ).toBe(count);
    expect(
      value('switchyard_request_duration_seconds_count', { surface: 'compat', outcome: 'upstream_error' }),
    ).toBe(1);
  });

  it('switchyard_upstream_duration_seconds per attempt, successes and failures', () => {
    expect(
      value('switchyard_upstream_duration_seconds_count', {
        provider: 'oai',
        model: 'gpt-4o-mini',
        result: 'success',
      }),
    ).toBeGreaterThanOrEqual(3);
    expect(
      value('switchyard_upstream_duration_seconds_count', {
        provider: 'oai',
        model: 'fail-503',
        result: 'error',
      }),
    ).toBe(2);
    expect(
      value('switchyard_upstream_duration_seconds_count', {
        provider: 'gem',
        model: 'fail-503',
        result: 'error',
      }),
    ).toBe(1);
    expect(
      value('switchyard_upstream_duration_seconds_count', {
        provider: 'claude',
        model: 'claude-haiku-4-5',
        result: 'success',
      }),
    ).toBe(1);
  });

  it('switchyard_time_to_first_token_seconds after a stream', () => {
    const labels = { surface: 'compat', provider: 'oai', model: 'gpt-4o-mini' };
    expect(value('switchyard_time_to_first_token_seconds_count', labels)).toBe(1);
    expect(value('switchyard_time_to_first_token_seconds_sum', labels)).toBeGreaterThan(0);
  });

  it('switchyard_tokens_total by direction', () => {
    const t = (workflow: string, direction: string) =>
      value('switchyard_tokens_total', { ...CHAT, workflow, direction });
    expect(t('chat', 'prompt')).toBeGreaterThan(0);
    expect(t('chat', 'completion')).toBeGreaterThan(0);
    expect(t('embed', 'prompt')).toBeGreaterThan(0);
    expect(find('switchyard_tokens_total', { workflow: 'embed', direction: 'completion' })).toEqual([]);
  });

  it('switchyard_failovers_total after a failover', () => {
    const s = find('switchyard_failovers_total', {
      ...PROJECT,
      workflow: 'failover-chat',
      provider: 'oai',
      model: 'fail-503',
    });
    expect(s).toHaveLength(1);
    expect(s[0]!.value).toBe(1);
    expect(s[0]!.labels.reason).toBeTruthy();
  });

  it('switchyard_requests_in_flight is back to 0 once everything finished, streams included', () => {
    expect(value('switchyard_requests_in_flight', { surface: 'compat' })).toBe(0);
    expect(value('switchyard_requests_in_flight', { surface: 'native' })).toBe(0);
  });

  it('switchyard_snapshot_info carries the served version', () => {
    const version = env.gw.store.current?.version;
    expect(version).toBeTruthy();
    expect(find('switchyard_snapshot_info', {})).toEqual([
      { name: 'switchyard_snapshot_info', labels: { version: version! }, value: 1 },
    ]);
  });

  it('the exposition passes `promtool check metrics`', () => {
    const promtool = locatePromtool();
    if (!promtool)
      throw new Error(
        'promtool not found (PATH, $PROMTOOL or /usr/bin/promtool). Install it: apt-get install -y --no-install-recommends prometheus',
      );
    const r = spawnSync(promtool, ['check', 'metrics'], { input: exposition, encoding: 'utf8' });
    expect(r.error).toBeUndefined();
    expect(`${r.stdout}${r.stderr}`.trim(), 'promtool problems').toBe('');
    expect(r.status).toBe(0);
  });
});

describe('requests in flight while they are served', () => {
  it('counts a request in flight, then releases it', async () => {
    const pending = env.client().chat.completions.create({
      model: 'slow-chat',
      messages: [{ role: 'user', content: 'take your time' }],
    });
    // The upstream takes 300 ms: scrape until the request shows up (or 2 s pass) instead of guessing a delay.
    const inFlight = async () =>
      parseExposition(await scrape()).find(
        (s) => s.name === 'switchyard_requests_in_flight' && s.labels.surface === 'compat',
      );
    const deadline = Date.now() + 2000;
    let during = await inFlight();
    while (during?.value !== 1 && Date.now() < deadline) during = await inFlight();
    expect(during?.value).toBe(1);
    await pending;
    const after = parseExposition(await scrape()).find(
      (s) => s.name === 'switchyard_requests_in_flight' && s.labels.surface === 'compat',
    );
    expect(after?.value).toBe(0);
  });
});

describe('probes on the operations port', () => {
  it('/healthz is 200', async () => {
    const res = await fetch(`${env.gw.metricsUrl}/healthz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok' });
  });

  it('/readyz is 200 with the snapshot version', async () => {
    const res = await fetch(`${env.gw.metricsUrl}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ready', snapshot: env.gw.store.current?.version });
  });

  it('the API port does not serve /metrics', async () => {
    const res = await fetch(`${env.gw.url}/metrics`, { headers: { authorization: `Bearer ${API_KEY}` } });
    expect(res.status).toBe(404);
  });
});
