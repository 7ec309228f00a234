/**
 * Opening a stream with failover (routing/stream.ts): slots are tried until one yields its first
 * event; after that the client has bytes, so a failure is the stream's own and no backup is tried.
 * Upstream: the provider simulator (streaming and non-streaming providers), or test mode.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { StreamEvent } from '#gateway/providers/types';
import { openStream } from '#gateway/routing/stream';
import type { Runtime } from '#gateway/snapshot/runtime';
import { NO_CHAIN } from '#gateway/tracing/off';
import { UpstreamError } from '#gateway/upstream/errors';
import { closeUpstreamPools } from '#gateway/upstream/http';
import { API_KEY, apiKey, project, provider, workflow } from '../harness/manifests.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import { chat, compileRuntime, FAST, ms, prepared } from './helpers.ts';

let sim: Simulator;
let runtime: Runtime;
const OK = { provider: 'oai', model: 'gpt-4o-mini' };

beforeAll(async () => {
  sim = await startSimulator();
  runtime = await compileRuntime([
    project(),
    ...apiKey('main', API_KEY),
    ...provider(
      'oai',
      'openai',
      sim.url,
      ['gpt-4o-mini', 'fail-503', 'fail-400', 'cut-0', 'cut-2', 'hang'],
      FAST,
    ),
    ...provider('whole', 'openai', sim.url, ['gpt-4o-mini'], { ...FAST, streaming: false }),
    workflow('503-then-ok', { provider: 'oai', model: 'fail-503', backups: [OK] }),
    workflow('400-then-ok', { provider: 'oai', model: 'fail-400', backups: [OK] }),
    workflow('cut-before', { provider: 'oai', model: 'cut-0', backups: [OK] }),
    workflow('cut-after', { provider: 'oai', model: 'cut-2', backups: [OK] }),
    workflow('hang-then-ok', { provider: 'oai', model: 'hang', backups: [OK] }),
    workflow('503-then-whole', {
      provider: 'oai',
      model: 'fail-503',
      backups: [{ provider: 'whole', model: 'gpt-4o-mini' }],
    }),
    workflow('test-mode', { provider: 'oai', model: 'fail-503', testMode: true }),
  ]);
});
afterAll(async () => {
  await closeUpstreamPools();
  await sim?.close();
});
beforeEach(() => sim.clearRequests());

const open = (wf: string, signal = new AbortController().signal) => {
  const p = prepared(runtime, chat(wf, { stream: true }));
  if (p.request.kind !== 'chat') throw new Error('expected a chat request');
  return openStream(p.plan, p.request, signal, NO_CHAIN);
};

/** The first event and the rest, read to the end. */
async function drain(first: StreamEvent, rest: AsyncIterator<StreamEvent>): Promise<StreamEvent[]> {
  const events = [first];
  for (let n = await rest.next(); !n.done; n = await rest.next()) events.push(n.value);
  return events;
}
const text = (events: StreamEvent[]): string =>
  events.map((e) => (e.type === 'delta' ? (e.content ?? '') : '')).join('');

const called = (): string[] => sim.requests().map((r) => String((r.body as { model?: unknown }).model));
const REPLY = 'Simulated openai/gpt-4o-mini reply: Where is my order?';
const overloaded = {
  provider: 'oai',
  model: 'fail-503',
  status: 'error',
  reason: {
    message: 'The engine is currently overloaded, please try again later.',
    status: 503,
    code: 'UPSTREAM_STATUS',
  },
  duration_ms: ms,
};

describe('openStream', () => {
  it('a failure before the first event moves on; the backup streams the whole answer', async () => {
    const s = await open('503-then-ok');
    expect(s.ok).toBe(true);
    if (!s.ok) return;
    expect(s.attempts).toEqual([
      overloaded,
      { provider: 'oai', model: 'gpt-4o-mini', status: 'success', duration_ms: ms },
    ]);
    expect(s.slot.slot).toBe('backup-1');
    expect(s.first.type).toBe('delta');
    const events = await drain(s.first, s.rest);
    expect(text(events).startsWith(REPLY)).toBe(true);
    expect(events.filter((e) => e.type === 'finish')).toEqual([{ type: 'finish', finish_reason: 'stop' }]);
    expect(called()).toEqual(['fail-503', 'gpt-4o-mini']);
  });

  it('a stream cut before its first event is a failure of that slot: the chain moves on', async () => {
    const s = await open('cut-before');
    expect(s.ok).toBe(true);
    if (!s.ok) return;
    expect(s.attempts).toEqual([
      {
        provider: 'oai',
        model: 'cut-0',
        status: 'error',
        reason: { message: 'other side closed', status: 502, code: 'UPSTREAM_STREAM_CUT' },
        duration_ms: ms,
      },
      { provider: 'oai', model: 'gpt-4o-mini', status: 'success', duration_ms: ms },
    ]);
    expect(called()).toEqual(['cut-0', 'gpt-4o-mini']);
  });

  it('after the first content byte a cut is the stream’s own failure: no backup is tried', async () => {
    const s = await open('cut-after');
    expect(s.ok).toBe(true);
    if (!s.ok) return;
    expect(s.attempts).toEqual([{ provider: 'oai', model: 'cut-2', status: 'success', duration_ms: ms }]);
    expect(s.first).toEqual({ type: 'delta', content: expect.any(String) });
    const err = await drain(s.first, s.rest).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UpstreamError);
    expect(err).toMatchObject({ code: 'UPSTREAM_STREAM_CUT', providerMessage: 'other side closed' });
    expect(called()).toEqual(['cut-2']);
  });

  it('a provider 4xx before the first event stops the chain', async () => {
    const s = await open('400-then-ok');
    expect(s.ok).toBe(false);
    if (s.ok) return;
    expect(s.attempts).toEqual([
      {
        provider: 'oai',
        model: 'fail-400',
        status: 'error',
        reason: { message: 'Invalid request.', status: 400, code: 'UPSTREAM_STATUS' },
        duration_ms: ms,
      },
    ]);
    expect(s.error.status).toBe(400);
    expect(s.refusal).toBeUndefined();
    expect(called()).toEqual(['fail-400']);
  });

  it('a client that went away while waiting for the first event: no backup', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const s = await open('hang-then-ok', ac.signal);
    expect(s.ok).toBe(false);
    if (s.ok) return;
    expect(s.attempts).toEqual([
      {
        provider: 'oai',
        model: 'hang',
        status: 'error',
        reason: { message: 'client aborted the request', code: 'UPSTREAM_ABORTED' },
        duration_ms: ms,
      },
    ]);
    expect(called()).toEqual(['hang']);
  });

  it('a provider that cannot stream is called once and its answer replayed as one chunk', async () => {
    const s = await open('503-then-whole');
    expect(s.ok).toBe(true);
    if (!s.ok) return;
    expect(s.attempts).toEqual([
      overloaded,
      { provider: 'whole', model: 'gpt-4o-mini', status: 'success', duration_ms: ms },
    ]);
    const events = await drain(s.first, s.rest);
    expect(events).toEqual([
      { type: 'delta', content: REPLY },
      { type: 'finish', finish_reason: 'stop' },
      {
        type: 'usage',
        usage: expect.objectContaining({ prompt_tokens: 5, completion_tokens: 14, total_tokens: 19 }),
      },
    ]);
    const whole = sim.requests().at(-1)!;
    expect(whole.body).not.toHaveProperty('stream');
  });

  it('test mode streams the generator’s answer in pieces, with no provider called', async () => {
    const s = await open('test-mode');
    expect(s.ok).toBe(true);
    if (!s.ok) return;
    expect(s.attempts).toEqual([{ provider: 'oai', model: 'fail-503', status: 'success', duration_ms: ms }]);
    const events = await drain(s.first, s.rest);
    expect(events.filter((e) => e.type === 'delta').length).toBeGreaterThan(1);
    expect(text(events)).toBe(
      'This is a test-mode answer from fail-503 to: "Where is my order?". No provider was called.',
    );
    expect(sim.requests()).toEqual([]);
  });
});
