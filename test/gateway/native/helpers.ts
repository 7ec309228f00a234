/** Shared plumbing for the native-surface suites: a real simulator, a real gateway, fetch over sockets. */

import { type RunningGateway, startGateway } from '../../harness/gateway.ts';
import { API_KEY, apiKey, baseConfig } from '../../harness/manifests.ts';
import type { Simulator } from '../../simulator/index.ts';
import { startSimulator } from '../../simulator/index.ts';

export interface Env {
  sim: Simulator;
  gw: RunningGateway;
  close(): Promise<void>;
}

/** Starts the simulator and a gateway on `baseConfig(sim.url)` plus whatever `extra(simUrl)` adds. */
export async function startEnv(extra: (simUrl: string) => object[] = () => []): Promise<Env> {
  const sim = await startSimulator();
  const gw = await startGateway([...baseConfig(sim.url), ...extra(sim.url)]);
  return {
    sim,
    gw,
    async close() {
      await gw.close();
      await sim.close();
    },
  };
}

export interface Reply<T = unknown> {
  status: number;
  headers: Headers;
  text: string;
  /** The parsed body, typed as the test expects it to be (undefined when it is not JSON). */
  json: T;
}

/** Native 4xx body: `{error: <code>, message, hint?}`. */
export interface ErrBody {
  error: string;
  message: string;
  hint?: string;
  param?: string;
}

export interface Attempt {
  provider: string;
  model: string;
  status: 'success' | 'error' | 'skipped';
  reason?: { message: string; status?: number; code?: string };
}

export interface Meta {
  status: 'success' | 'error';
  http_status: number;
  workflow: string | null;
  requested_provider: string;
  requested_model: string;
  used_provider: string | null;
  used_model: string | null;
  duration_ms: number;
  usage: Record<string, number>;
  structured_output: boolean;
  attempts: Attempt[];
  request_log_id: string;
  session_id?: string;
}

export interface Wrapped<D = unknown> {
  data: D;
  customer_data: Record<string, unknown>;
  meta: Meta;
  backups: { position: number; provider: string; model: string }[];
  error?: { message: string; details: { status: number; message: string } };
}

export interface ChatCompletion {
  id: string;
  object: string;
  created: number;
  model: string;
  choices: { index: number; message: { role: string; content: string | null }; finish_reason: string }[];
  usage: {
    prompt_tokens: number;
    completion_tokens: number;
    total_tokens: number;
    prompt_tokens_details?: { cached_tokens: number };
  };
}

export async function post<T = unknown>(
  url: string,
  body: unknown,
  opts: { key?: string | null; auth?: string; path?: string; raw?: string; contentType?: string } = {},
): Promise<Reply<T>> {
  const headers: Record<string, string> = { 'content-type': opts.contentType ?? 'application/json' };
  if (opts.auth !== undefined) headers.authorization = opts.auth;
  else if (opts.key !== null) headers.authorization = `Bearer ${opts.key ?? API_KEY}`;
  const res = await fetch(`${url}${opts.path ?? '/v1/ai'}`, {
    method: 'POST',
    headers,
    body: opts.raw ?? JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json: json as T };
}

export interface SseFrame {
  event: string | undefined;
  data: string;
}

/** Splits an SSE body into frames (event name, data). */
export function parseSse(text: string): SseFrame[] {
  const frames: SseFrame[] = [];
  for (const block of text.split(/\n\n/)) {
    if (!block.trim()) continue;
    let event: string | undefined;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    frames.push({ event, data: data.join('\n') });
  }
  return frames;
}

export const userMsg = (content = 'hello there') => [{ role: 'user', content }];

/** An ApiKey (plus its Secret) with extra spec fields such as `revoked` or `expiresAt`. */
export function keyWith(
  name: string,
  key: string,
  spec: Record<string, unknown>,
  opts: { project?: string; scopes?: string[] } = {},
): object[] {
  const [sec, apiKeyObj] = apiKey(name, key, opts);
  const k = apiKeyObj as { spec: Record<string, unknown> };
  return [sec as object, { ...k, spec: { ...k.spec, ...spec } }];
}
