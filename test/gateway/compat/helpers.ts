/**
 * Shared plumbing for the compatible-surface suites: a real provider simulator, a real gateway on
 * free ports, and the official `openai` SDK pointed at it (no retries, so every error surfaces).
 */
import OpenAI from 'openai';
import { expect } from 'vitest';
import { type RunningGateway, startGateway } from '../../harness/gateway.ts';
import { API_KEY, apiKey, baseConfig, NS, PROJECT_ID, project, workflow } from '../../harness/manifests.ts';
import type { Simulator } from '../../simulator/index.ts';
import { startSimulator } from '../../simulator/index.ts';

/** A key of a project whose compatible API is switched off. */
export const CLOSED_KEY = 'sy_live_ClosedProjectKey0123456789abcdefgh';
export const CLOSED_PROJECT = 'closed';

/** Fixed creation time of every workflow, so model objects can be compared exactly. */
export const CREATED_ISO = '2025-03-04T05:06:07Z';
export const CREATED = Math.floor(Date.parse(CREATED_ISO) / 1000);

export const SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'age', 'tags'],
  properties: {
    name: { type: 'string' },
    age: { type: 'integer', minimum: 0 },
    tags: { type: 'array', items: { type: 'string' } },
  },
} as const;

interface WorkflowDef {
  name: string;
  spec: Record<string, unknown>;
  project?: string;
}

/** The workflows every compat suite gets; `expectedModel` derives the exact model object from these. */
export const WORKFLOWS: readonly WorkflowDef[] = [
  { name: 'chat', spec: { provider: 'oai', model: 'gpt-4o-mini' } },
  { name: 'claude-chat', spec: { provider: 'claude', model: 'claude-haiku-4-5' } },
  {
    name: 'failover-chat',
    spec: {
      provider: 'oai',
      model: 'fail-503',
      backups: [{ provider: 'claude', model: 'claude-haiku-4-5' }],
    },
  },
  {
    name: 'all-fail',
    spec: { provider: 'oai', model: 'fail-503', backups: [{ provider: 'gem', model: 'fail-503' }] },
  },
  { name: 'cut-stream', spec: { provider: 'oai', model: 'cut-2' } },
  { name: 'slow-chat', spec: { provider: 'oai', model: 'slow-300' } },
  { name: 'vision', spec: { requestType: 'vision', provider: 'gem', model: 'gemini-2.5-flash' } },
  { name: 'complete', spec: { requestType: 'completion', provider: 'oai', model: 'gpt-4o-mini' } },
  {
    name: 'claude-complete',
    spec: { requestType: 'completion', provider: 'claude', model: 'claude-haiku-4-5' },
  },
  { name: 'complete-fail', spec: { requestType: 'completion', provider: 'oai', model: 'fail-503' } },
  { name: 'complete-cut', spec: { requestType: 'completion', provider: 'oai', model: 'cut-2' } },
  { name: 'embed', spec: { requestType: 'embedding', provider: 'oai', model: 'gpt-4o-mini' } },
  { name: 'image', spec: { requestType: 'image', provider: 'oai', model: 'gpt-4o-mini' } },
  { name: 'audio', spec: { requestType: 'audio', provider: 'oai', model: 'gpt-4o-mini' } },
  {
    name: 'extract',
    spec: { provider: 'oai', model: 'gpt-4o-mini', structuredOutput: { schema: SCHEMA } },
  },
  { name: 'sandbox', spec: { provider: 'gem', model: 'gemini-2.5-flash', testMode: true } },
  { name: 'order-pipeline', spec: { provider: 'oai', model: 'gpt-4o-mini', eventName: 'order.created' } },
  { name: 'closed-chat', project: CLOSED_PROJECT, spec: { provider: 'oai', model: 'gpt-4o-mini' } },
];

function workflowManifest(def: WorkflowDef): object {
  const m = workflow(def.name, def.spec) as {
    metadata: Record<string, unknown>;
    spec: Record<string, unknown>;
  };
  return {
    ...m,
    metadata: { ...m.metadata, creationTimestamp: CREATED_ISO },
    spec: { ...m.spec, ...(def.project ? { projectRef: { name: def.project } } : {}) },
  };
}

export function compatManifests(simUrl: string): object[] {
  return [
    ...baseConfig(simUrl),
    project(CLOSED_PROJECT, { compatibleApi: { enabled: false } }),
    ...apiKey('closed', CLOSED_KEY, { project: CLOSED_PROJECT }),
    ...WORKFLOWS.map(workflowManifest),
  ];
}

/** The compatible model object docs/api.md describes for one of WORKFLOWS. */
export function expectedModel(name: string) {
  const def = WORKFLOWS.find((w) => w.name === name);
  if (!def) throw new Error(`no workflow ${name}`);
  const s = def.spec as { provider: string; model: string; requestType?: string; testMode?: boolean };
  return {
    id: name,
    object: 'model',
    created: CREATED,
    owned_by: 'switchyard',
    permission: [],
    root: `${s.provider}/${s.model}`,
    service_metadata: {
      provider: s.provider,
      provider_model: s.model,
      test_mode: s.testMode ?? false,
      request_type: s.requestType ?? 'chat',
    },
  };
}

/** Names of the workflows of the main project (what `models.list` must return). */
export const MAIN_PROJECT_WORKFLOWS = WORKFLOWS.filter((w) => !w.project).map((w) => w.name);

export interface CompatEnv {
  sim: Simulator;
  gw: RunningGateway;
  client(opts?: { prefix?: '/v1' | '/api/v1'; key?: string }): OpenAI;
  close(): Promise<void>;
}

export async function startCompatEnv(): Promise<CompatEnv> {
  const sim = await startSimulator();
  const gw = await startGateway(compatManifests(sim.url));
  return {
    sim,
    gw,
    client: (opts = {}) =>
      new OpenAI({
        baseURL: `${gw.url}${opts.prefix ?? '/v1'}`,
        apiKey: opts.key ?? API_KEY,
        maxRetries: 0,
        timeout: 15_000,
      }),
    async close() {
      await gw.close();
      await sim.close();
    },
  };
}

export { API_KEY, NS, PROJECT_ID };

/** A small, valid PCM WAV file (silence), for transcription uploads. */
export function smallWav(ms = 200): Buffer {
  const rate = 16_000;
  const data = Math.round((rate * ms) / 1000) * 2;
  const b = Buffer.alloc(44 + data);
  b.write('RIFF', 0, 'ascii');
  b.writeUInt32LE(36 + data, 4);
  b.write('WAVEfmt ', 8, 'ascii');
  b.writeUInt32LE(16, 16);
  b.writeUInt16LE(1, 20);
  b.writeUInt16LE(1, 22);
  b.writeUInt32LE(rate, 24);
  b.writeUInt32LE(rate * 2, 28);
  b.writeUInt16LE(2, 32);
  b.writeUInt16LE(16, 34);
  b.write('data', 36, 'ascii');
  b.writeUInt32LE(data, 40);
  return b;
}

/** Raw JSON request on the compatible surface, for what the SDK cannot send (or hides). */
export async function rawJson(
  url: string,
  path: string,
  opts: { method?: string; body?: unknown; key?: string | null } = {},
): Promise<{ status: number; headers: Headers; json: unknown; text: string }> {
  const headers: Record<string, string> = {};
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  if (opts.key !== null) headers.authorization = `Bearer ${opts.key ?? API_KEY}`;
  const res = await fetch(`${url}${path}`, {
    method: opts.method ?? (opts.body === undefined ? 'GET' : 'POST'),
    headers,
    ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text };
}

/** The error fields a compatible-surface refusal must carry. */
export interface ErrorWant {
  status: number;
  type: string;
  code: string;
  param: string | null;
}

/** The raw body is OpenAI's error envelope with exactly these fields; returns its message. */
export function expectEnvelope(r: { status: number; json: unknown }, want: ErrorWant): string {
  expect(r.status).toBe(want.status);
  const body = r.json as { error: Record<string, unknown> };
  expect(Object.keys(body)).toEqual(['error']);
  expect(Object.keys(body.error).sort()).toEqual(['code', 'message', 'param', 'type']);
  expect(body.error).toMatchObject({ type: want.type, code: want.code, param: want.param });
  const message = body.error.message as string;
  expect(message.length).toBeGreaterThan(0);
  return message;
}
