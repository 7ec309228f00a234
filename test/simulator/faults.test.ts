import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { faultFromModel } from './faults.ts';
import { type Simulator, startSimulator } from './index.ts';
import { Recorder } from './recorder.ts';
import { json, parseSse, post } from './test-helpers.ts';

let sim: Simulator;
const auth = { authorization: 'Bearer sk-test' };
const messages = [{ role: 'user', content: 'Hello faults' }];
const chat = (model: string, extra: Record<string, unknown> = {}) =>
  post(`${sim.url}/v1/chat/completions`, { model, messages, ...extra }, auth);

/** Reads a body until it ends or breaks; returns what arrived and whether it broke. */
async function readAll(res: Response): Promise<{ text: string; broken: boolean }> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text, broken: false };
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    return { text, broken: true };
  }
}

beforeAll(async () => {
  sim = await startSimulator();
});
afterEach(() => {
  sim.clearFaults();
  sim.clearRequests();
});
afterAll(() => sim.close());

describe('fault rules (in-process API)', () => {
  it('status: sends the provider error body `times` times, with retry-after', async () => {
    sim.addFault({ match: { provider: 'openai' }, status: 503, retryAfter: 2, times: 2 });
    for (let i = 0; i < 2; i++) {
      const res = await chat('gpt-4o');
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('2');
      expect(await json<{ error: { type: string } }>(res)).toMatchObject({ error: { type: 'server_error' } });
    }
    expect((await chat('gpt-4o')).status).toBe(200);
  });

  it('matches on provider, model and path', async () => {
    sim.addFault({ match: { provider: 'anthropic' }, status: 500 });
    sim.addFault({ match: { model: 'other-model' }, status: 500 });
    sim.addFault({ match: { path: '/embeddings' }, status: 500 });
    expect((await chat('gpt-4o')).status).toBe(200);
    expect((await chat('other-model')).status).toBe(500);
    const emb = await post(`${sim.url}/v1/embeddings`, { model: 'gpt-4o', input: 'x' }, auth);
    expect(emb.status).toBe(500);
  });

  it('delayMs delays the headers', async () => {
    sim.addFault({ delayMs: 150 });
    const started = Date.now();
    const res = await chat('gpt-4o');
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(res.status).toBe(200);
  });

  it('firstByteDelayMs sends headers first, then the body later', async () => {
    sim.addFault({ firstByteDelayMs: 200 });
    const started = Date.now();
    const res = await chat('gpt-4o');
    const headersAt = Date.now() - started;
    await res.json();
    const bodyAt = Date.now() - started;
    expect(headersAt).toBeLessThan(150);
    expect(bodyAt).toBeGreaterThanOrEqual(190);
  });

  it('hang never answers', async () => {
    sim.addFault({ hang: true, times: 1 });
    await expect(
      fetch(`${sim.url}/v1/chat/completions`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ model: 'gpt-4o', messages }),
        signal: AbortSignal.timeout(200),
      }),
    ).rejects.toThrow();
    expect((await chat('gpt-4o')).status).toBe(200);
  });

  it('cutAfterChunks destroys a stream after N events', async () => {
    sim.addFault({ cutAfterChunks: 3 });
    const res = await chat('gpt-4o', { stream: true });
    expect(res.status).toBe(200);
    const { text, broken } = await readAll(res);
    expect(broken).toBe(true);
    expect(parseSse(text)).toHaveLength(3);
  });

  it('cutAfterChunks on a non-stream answer sends half the body and drops the socket', async () => {
    sim.addFault({ cutAfterChunks: 0 });
    const { text, broken } = await readAll(await chat('gpt-4o'));
    expect(broken).toBe(true);
    expect(() => JSON.parse(text)).toThrow();
  });

  it('malformed body and malformed chunk', async () => {
    sim.addFault({ malformed: 'body', times: 1 });
    const res = await chat('gpt-4o');
    expect(res.status).toBe(200);
    await expect(res.json()).rejects.toThrow();

    sim.addFault({ malformed: 'chunk', times: 1 });
    const stream = await (await chat('gpt-4o', { stream: true })).text();
    const events = parseSse(stream);
    const bad = events.filter((e) => {
      if (e.data === '[DONE]') return false;
      try {
        JSON.parse(e.data);
        return false;
      } catch {
        return true;
      }
    });
    expect(bad).toHaveLength(1);
    expect(events.at(-1)!.data).toBe('[DONE]');
  });

  it('resetConnection fails the request at the transport level', async () => {
    sim.addFault({ resetConnection: true, times: 1 });
    await expect(chat('gpt-4o')).rejects.toThrow();
  });

  it('per-rule stream pacing', async () => {
    sim.addFault({ streamChunks: 5, chunkIntervalMs: 40 });
    const started = Date.now();
    const text = await (await chat('gpt-4o', { stream: true })).text();
    const content = parseSse(text).filter(
      (e) => e.data.includes('"content":"') && !e.data.includes('"content":""'),
    );
    expect(content).toHaveLength(5);
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
  });

  it('applies faults to every provider with its own error shape', async () => {
    sim.addFault({ status: 429 });
    const anthropic = await post(
      `${sim.url}/v1/messages`,
      { model: 'c', max_tokens: 5, messages },
      { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
    );
    expect(anthropic.status).toBe(429);
    expect(await anthropic.json()).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });
  });
});

describe('model-name convention', () => {
  it('parses tokens anywhere in the name', () => {
    expect(faultFromModel('gpt-4o')).toEqual({});
    expect(faultFromModel('fail-503')).toEqual({ status: 503 });
    expect(faultFromModel('gpt-4o-fail-429-retry-3')).toEqual({ status: 429, retryAfter: 3 });
    expect(faultFromModel('slow-200-cut-3')).toEqual({ delayMs: 200, cutAfterChunks: 3 });
    expect(faultFromModel('ttfb-50')).toEqual({ firstByteDelayMs: 50 });
    expect(faultFromModel('hang')).toEqual({ hang: true });
    expect(faultFromModel('claude-malformed')).toEqual({ malformed: 'body' });
    expect(faultFromModel('reset')).toEqual({ resetConnection: true });
    expect(faultFromModel('chunks-64-interval-20')).toEqual({ streamChunks: 64, chunkIntervalMs: 20 });
    expect(faultFromModel('unhanged')).toEqual({});
  });

  it('fail-503, slow-N, cut-N, malformed and reset by model name', async () => {
    expect((await chat('fail-503')).status).toBe(503);
    const started = Date.now();
    expect((await chat('slow-120')).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(110);
    const cut = await readAll(await chat('cut-2', { stream: true }));
    expect(cut.broken).toBe(true);
    expect(parseSse(cut.text)).toHaveLength(2);
    await expect((await chat('malformed')).json()).rejects.toThrow();
    await expect(chat('reset')).rejects.toThrow();
  });

  it('hang by model name', async () => {
    await expect(
      fetch(`${sim.url}/v1/chat/completions`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ model: 'hang', messages }),
        signal: AbortSignal.timeout(150),
      }),
    ).rejects.toThrow();
  });

  it('works for path models (Gemini) and deployments (Azure)', async () => {
    const gemini = await post(
      `${sim.url}/v1beta/models/gemini-fail-500:generateContent`,
      { contents: [{ parts: [{ text: 'x' }] }] },
      { 'x-goog-api-key': 'k' },
    );
    expect(gemini.status).toBe(500);
    const azure = await post(
      `${sim.url}/openai/deployments/dep-fail-502/chat/completions?api-version=2024-10-21`,
      { messages },
      { 'api-key': 'k' },
    );
    expect(azure.status).toBe(502);
  });

  it('chunks-N sets the number of content chunks', async () => {
    const text = await (await chat('gpt-4o-chunks-64', { stream: true })).text();
    const events = parseSse(text);
    expect(events).toHaveLength(64 + 3); // role chunk, 64 content chunks, finish chunk, [DONE]
  });
});

describe('HTTP control API and recording', () => {
  it('adds and clears faults over HTTP', async () => {
    const added = await post(`${sim.url}/_sim/faults`, { match: { model: 'm1' }, status: 418, times: 1 });
    expect(added.status).toBe(201);
    expect((await chat('m1')).status).toBe(418);
    expect((await chat('m1')).status).toBe(200);
    await post(`${sim.url}/_sim/faults`, { status: 500 });
    expect((await chat('m1')).status).toBe(500);
    expect((await fetch(`${sim.url}/_sim/faults`, { method: 'DELETE' })).status).toBe(200);
    expect((await chat('m1')).status).toBe(200);
    const bad = await post(`${sim.url}/_sim/faults`, { status: 'nope' });
    expect(bad.status).toBe(400);
  });

  it('records requests with secrets redacted, readable over HTTP', async () => {
    await chat('gpt-4o');
    await post(
      `${sim.url}/v1/messages`,
      { model: 'c', max_tokens: 5, messages },
      { 'x-api-key': 'sk-ant-secret', 'anthropic-version': '2023-06-01', 'x-trace': 't1' },
    );
    const list = sim.requests();
    expect(list).toHaveLength(2);
    expect(list[0]).toMatchObject({
      provider: 'openai',
      method: 'POST',
      path: '/v1/chat/completions',
      headers: { authorization: '<redacted>' },
      body: { model: 'gpt-4o', messages },
    });
    expect(list[1]!.headers['x-trace']).toBe('t1');
    const overHttp = await json<unknown[]>(await fetch(`${sim.url}/_sim/requests`));
    expect(overHttp).toEqual(list);
    expect(JSON.stringify(overHttp)).not.toContain('secret');
    await fetch(`${sim.url}/_sim/requests`, { method: 'DELETE' });
    expect(sim.requests()).toEqual([]);
  });

  it('keeps a bounded ring buffer, oldest first', () => {
    const r = new Recorder();
    for (let i = 0; i < 1005; i++)
      r.add({ provider: 'openai', method: 'GET', path: `/${i}`, headers: {}, body: null });
    const list = r.list();
    expect(list).toHaveLength(1000);
    expect(list[0]!.path).toBe('/5');
    expect(list.at(-1)!.path).toBe('/1004');
  });
});

describe('simulator options', () => {
  it('global delayMs, streamChunks, chunkIntervalMs and validate: false', async () => {
    const s = await startSimulator({ delayMs: 100, streamChunks: 4, chunkIntervalMs: 30, validate: false });
    try {
      const started = Date.now();
      const res = await post(`${s.url}/v1/chat/completions`, { model: 'm', messages, stream: true }, auth);
      const events = parseSse(await res.text());
      expect(events).toHaveLength(4 + 3);
      expect(Date.now() - started).toBeGreaterThanOrEqual(100 + 3 * 30 - 10);
      // Without validation a sloppy body still gets an answer (max_tokens missing here).
      const sloppy = await post(
        `${s.url}/v1/messages`,
        { model: 'c', messages },
        { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
      );
      expect(sloppy.status).toBe(200);
    } finally {
      await s.close();
    }
  });

  it('close() ends hanging requests', async () => {
    const s = await startSimulator();
    const pending = post(`${s.url}/v1/chat/completions`, { model: 'hang', messages }, auth).then(
      () => 'answered',
      () => 'failed',
    );
    await new Promise((r) => setTimeout(r, 50));
    await s.close();
    expect(await pending).toBe('failed');
  });
});
