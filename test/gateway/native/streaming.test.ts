/** Native SSE: frame order, failover before the first byte, explicit errors after it, replayed SSE. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { API_KEY, provider, workflow } from '../../harness/manifests.ts';
import {
  type Env,
  type Meta,
  parseSse,
  post,
  type SseFrame,
  startEnv,
  userMsg,
  type Wrapped,
} from './helpers.ts';

const OK = { provider: 'claude', model: 'claude-haiku-4-5' };

interface Chunk {
  id: string;
  object: string;
  created: number;
  model: string;
  choices: { index: number; delta: { role?: string; content?: string }; finish_reason: string | null }[];
}
interface Metadata {
  workflow: string | null;
  session_id: string | null;
  used_provider: string;
  used_model: string;
}

let env: Env;
beforeAll(async () => {
  env = await startEnv((simUrl) => [
    ...provider('streamy', 'openai', simUrl, ['cut-0', 'cut-3', 'gpt-4o-mini', 'chunks-20-interval-50']),
    ...provider('quick', 'openai', simUrl, ['hang'], {
      timeouts: { connectMs: 500, firstByteMs: 300, totalMs: 1500 },
    }),
    ...provider('nostream', 'openai', simUrl, ['gpt-4o-mini'], { streaming: false }),
    workflow('st-ok', { provider: 'oai', model: 'gpt-4o-mini', backups: [OK] }),
    workflow('st-cut-before', { provider: 'streamy', model: 'cut-0', backups: [OK] }),
    workflow('st-cut-after', { provider: 'streamy', model: 'cut-3', backups: [OK] }),
    workflow('st-503', { provider: 'oai', model: 'fail-503', backups: [OK] }),
    workflow('st-timeout', { provider: 'quick', model: 'hang', backups: [OK] }),
    workflow('st-400', { provider: 'oai', model: 'fail-400', backups: [OK] }),
    workflow('st-all-fail', {
      provider: 'oai',
      model: 'fail-503',
      backups: [{ provider: 'gem', model: 'fail-503' }],
    }),
    workflow('st-slow', { provider: 'streamy', model: 'chunks-20-interval-50' }),
    workflow('st-nostream', { provider: 'nostream', model: 'gpt-4o-mini' }),
    workflow('st-completion', { provider: 'oai', model: 'gpt-4o-mini', requestType: 'completion' }),
    workflow('st-anthropic', OK),
    workflow('st-gemini', { provider: 'gem', model: 'gemini-2.5-flash' }),
    workflow('st-azure', { provider: 'azure', model: 'gpt4o-deploy' }),
  ]);
});
afterAll(async () => env?.close());
beforeEach(() => env.sim.clearRequests());

const stream = (body: Record<string, unknown>) =>
  post(env.gw.url, { messages: userMsg('stream me'), stream: true, ...body });

interface Parsed {
  metadata: Metadata;
  chunks: Chunk[];
  meta: Meta;
  frames: SseFrame[];
  text: string;
}

/** Checks the complete native frame order and returns the parts. */
function expectCleanStream(frames: SseFrame[]): Parsed {
  expect(frames.length).toBeGreaterThanOrEqual(4);
  const first = frames[0]!;
  expect(first.event).toBe('metadata');
  const last = frames[frames.length - 1]!;
  expect(last.event).toBeUndefined();
  expect(last.data).toBe('[DONE]');
  const metaFrame = frames[frames.length - 2]!;
  expect(metaFrame.event).toBe('meta');
  const middle = frames.slice(1, -2);
  expect(middle.length).toBeGreaterThan(0);
  for (const f of middle) expect(f.event, f.data).toBeUndefined();
  const chunks = middle.map((f) => JSON.parse(f.data) as Chunk);
  for (const c of chunks) {
    expect(c.object).toBe('chat.completion.chunk');
    expect(c.choices).toHaveLength(1);
    expect(c.choices[0]!.index).toBe(0);
  }
  expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
  expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
  expect(chunks[chunks.length - 1]!.choices[0]!.finish_reason).toBe('stop');
  const text = chunks.map((c) => c.choices[0]!.delta.content ?? '').join('');
  expect(frames.filter((f) => f.event === 'error')).toHaveLength(0);
  return {
    metadata: JSON.parse(first.data) as Metadata,
    chunks,
    meta: JSON.parse(metaFrame.data) as Meta,
    frames,
    text,
  };
}

describe('native stream format', () => {
  it('metadata event, chat.completion.chunk data lines, meta event with usage and attempts, [DONE]', async () => {
    const r = await stream({ workflow: 'st-ok' });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(r.headers.get('x-service-workflow')).toBe('st-ok');
    expect(r.headers.get('x-service-used-provider')).toBe('oai');
    const p = expectCleanStream(parseSse(r.text));
    expect(p.metadata).toMatchObject({
      workflow: 'st-ok',
      session_id: null,
      used_provider: 'oai',
      used_model: 'gpt-4o-mini',
    });
    expect(p.chunks[0]!.model).toBe('st-ok');
    expect(p.text).toContain('Simulated openai/gpt-4o-mini reply: stream me');
    expect(p.meta.status).toBe('success');
    expect(p.meta.http_status).toBe(200);
    expect(p.meta.workflow).toBe('st-ok');
    expect(p.meta.used_provider).toBe('oai');
    expect(p.meta.used_model).toBe('gpt-4o-mini');
    expect(Number.isInteger(p.meta.duration_ms)).toBe(true);
    expect(p.meta.usage.prompt_tokens).toBeGreaterThan(0);
    expect(p.meta.usage.completion_tokens).toBeGreaterThan(0);
    expect(p.meta.usage.total_tokens).toBe(
      (p.meta.usage.prompt_tokens ?? 0) + (p.meta.usage.completion_tokens ?? 0),
    );
    expect(p.meta.attempts).toHaveLength(1);
    expect(p.meta.attempts[0]).toMatchObject({ provider: 'oai', model: 'gpt-4o-mini', status: 'success' });
    const sent = env.sim.requests()[0]!.body as { stream?: boolean };
    expect(sent.stream).toBe(true);
  });

  it('the /api/v1/ai alias streams the same way', async () => {
    const r = await post(
      env.gw.url,
      { workflow: 'st-ok', messages: userMsg(), stream: true },
      { path: '/api/v1/ai' },
    );
    expectCleanStream(parseSse(r.text));
  });

  it('a completion workflow streams chunks too', async () => {
    const r = await post(env.gw.url, { workflow: 'st-completion', prompt: 'Once upon', stream: true });
    const p = expectCleanStream(parseSse(r.text));
    expect(p.text.length).toBeGreaterThan(0);
  });

  it.each([
    ['st-anthropic', 'claude', 'anthropic'],
    ['st-gemini', 'gem', 'gemini'],
    ['st-azure', 'azure', 'azure-openai'],
  ])('%s streams through %s', async (wf, providerName, simProvider) => {
    const r = await stream({ workflow: wf });
    expect(r.status).toBe(200);
    const p = expectCleanStream(parseSse(r.text));
    expect(p.metadata.used_provider).toBe(providerName);
    expect(p.meta.used_provider).toBe(providerName);
    expect(p.text).toContain(`Simulated ${simProvider}/`);
    expect(p.meta.usage.total_tokens).toBeGreaterThan(0);
  });

  it('a Provider with streaming: false is called once and answered as replayed SSE', async () => {
    const r = await stream({ workflow: 'st-nostream' });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const p = expectCleanStream(parseSse(r.text));
    expect(p.metadata.used_provider).toBe('nostream');
    expect(p.text).toBe('Simulated openai/gpt-4o-mini reply: stream me');
    expect(p.meta.usage.total_tokens).toBeGreaterThan(0);
    const sent = env.sim.requests();
    expect(sent).toHaveLength(1);
    expect((sent[0]!.body as { stream?: boolean }).stream).not.toBe(true);
  });
});

describe('failover before the first byte', () => {
  it('a stream cut before the first byte fails over: the client sees a clean stream from the backup', async () => {
    const r = await stream({ workflow: 'st-cut-before' });
    expect(r.status).toBe(200);
    const p = expectCleanStream(parseSse(r.text));
    expect(p.metadata.used_provider).toBe('claude');
    expect(p.text).toContain('Simulated anthropic/claude-haiku-4-5 reply');
    expect(p.text).not.toContain('openai');
    expect(p.meta.attempts.map((a) => `${a.provider}:${a.model}:${a.status}`)).toEqual([
      'streamy:cut-0:error',
      'claude:claude-haiku-4-5:success',
    ]);
    expect(env.sim.requests().map((q) => q.provider)).toEqual(['openai', 'anthropic']);
  });

  it('primary 503 on a stream fails over to the backup', async () => {
    const r = await stream({ workflow: 'st-503' });
    const p = expectCleanStream(parseSse(r.text));
    expect(p.metadata.used_provider).toBe('claude');
    expect(p.meta.attempts[0]).toMatchObject({ provider: 'oai', status: 'error' });
    expect(p.meta.attempts[0]!.reason?.status).toBe(503);
  });

  it('primary timeout (no first byte within firstByteMs) fails over', async () => {
    const r = await stream({ workflow: 'st-timeout' });
    const p = expectCleanStream(parseSse(r.text));
    expect(p.metadata.used_provider).toBe('claude');
    expect(p.meta.attempts[0]!.reason?.code).toBe('UPSTREAM_TIMEOUT');
  });

  it('every slot failing before the first byte answers HTTP 200 with the wrapped error JSON', async () => {
    const r = await stream({ workflow: 'st-all-fail' });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    const w = r.json as Wrapped<null>;
    expect(w.data).toBeNull();
    expect(w.meta.status).toBe('error');
    expect(w.meta.http_status).toBe(502);
    expect(w.meta.attempts.map((a) => a.status)).toEqual(['error', 'error']);
    expect(w.error?.details.status).toBe(503);
  });

  it('a 400 before the first byte stops the chain (no backup call)', async () => {
    const r = await stream({ workflow: 'st-400' });
    expect(r.status).toBe(200);
    const w = r.json as Wrapped<null>;
    expect(w.meta.status).toBe('error');
    expect(w.meta.http_status).toBe(400);
    expect(w.error?.details.status).toBe(400);
    expect(env.sim.requests()).toHaveLength(1);
  });
});

describe('failure after the first byte', () => {
  it('a cut after the first byte ends with event: error and no [DONE], without failing over', async () => {
    const r = await stream({ workflow: 'st-cut-after' });
    expect(r.status).toBe(200);
    const frames = parseSse(r.text);
    expect(frames[0]!.event).toBe('metadata');
    expect((JSON.parse(frames[0]!.data) as Metadata).used_provider).toBe('streamy');
    const data = frames.filter((f) => f.event === undefined);
    expect(data.length).toBeGreaterThan(0);
    expect(data.some((f) => f.data === '[DONE]')).toBe(false);
    for (const f of data) expect((JSON.parse(f.data) as Chunk).object).toBe('chat.completion.chunk');
    const last = frames[frames.length - 1]!;
    expect(last.event).toBe('error');
    const err = JSON.parse(last.data) as { error: { message: string; code: string } };
    expect(err.error.code).toBe('upstream_error');
    expect(err.error.message.length).toBeGreaterThan(0);
    expect(frames.some((f) => f.event === 'meta')).toBe(false);
    // No silent switch to the backup once bytes reached the client.
    expect(env.sim.requests().map((q) => q.provider)).toEqual(['openai']);
  });
});

describe('client disconnects', () => {
  it('a client that goes away mid-stream does not hurt the gateway; the upstream stream is abandoned', async () => {
    const ac = new AbortController();
    const res = await fetch(`${env.gw.url}/v1/ai`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}` },
      body: JSON.stringify({ workflow: 'st-slow', messages: userMsg(), stream: true }),
      signal: ac.signal,
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain('event: metadata');
    ac.abort();
    await reader.read().catch(() => undefined);
    // The gateway keeps serving, streams included.
    const again = await stream({ workflow: 'st-ok' });
    expectCleanStream(parseSse(again.text));
  });
});
