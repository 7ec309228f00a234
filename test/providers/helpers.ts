/** Shared helpers for the provider adapter tests (run against the provider simulator). */
import { expect, it } from 'vitest';
import type {
  ChatRequest,
  ProviderAdapter,
  ProviderType,
  StreamEvent,
  UpstreamTarget,
} from '#gateway/providers/types';
import { UpstreamError } from '#gateway/upstream/errors';
import type { FaultRule, ProviderName, Simulator } from '../simulator/index.ts';

export const API_KEY = 'sk-sim-test';

export function makeTarget(
  type: ProviderType,
  baseURL: string,
  model: string,
  overrides: Partial<UpstreamTarget> = {},
): UpstreamTarget {
  return {
    providerName: `${type}-test`,
    type,
    baseURL,
    apiKey: API_KEY,
    model,
    streaming: true,
    timeouts: { connectMs: 1000, firstByteMs: 5000, totalMs: 10_000 },
    ...overrides,
  };
}

export const ctx = (): { signal: AbortSignal } => ({ signal: new AbortController().signal });

export async function collect(iter: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const out: StreamEvent[] = [];
  for await (const ev of iter) out.push(ev);
  return out;
}

export function streamedText(events: StreamEvent[]): string {
  let s = '';
  for (const e of events) if (e.type === 'delta' && e.content) s += e.content;
  return s;
}

/** Tool calls reassembled from stream deltas, by index. */
export function streamedToolCalls(events: StreamEvent[]): { id: string; name: string; arguments: string }[] {
  const calls: { id: string; name: string; arguments: string }[] = [];
  for (const e of events) {
    if (e.type !== 'delta' || !e.tool_calls) continue;
    for (const tc of e.tool_calls) {
      calls[tc.index] ??= { id: '', name: '', arguments: '' };
      const c = calls[tc.index]!;
      if (tc.id) c.id = tc.id;
      if (tc.name) c.name += tc.name;
      if (tc.arguments) c.arguments += tc.arguments;
    }
  }
  return calls;
}

export async function failure(fn: () => Promise<unknown>): Promise<UpstreamError> {
  try {
    await fn();
  } catch (err) {
    if (!(err instanceof UpstreamError)) throw err;
    return err;
  }
  throw new Error('expected an UpstreamError');
}

export const WEATHER_TOOL = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'Weather for a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['c', 'f'] } },
      required: ['city', 'unit'],
      additionalProperties: false,
    },
  },
};

export const PERSON_SCHEMA = {
  name: 'person',
  schema: {
    type: 'object',
    properties: { name: { type: 'string' }, age: { type: 'integer' } },
    required: ['name', 'age'],
    additionalProperties: false,
  },
  strict: true,
};

export const simpleChat = (text = 'Hello there'): ChatRequest => ({
  kind: 'chat',
  messages: [
    { role: 'system', content: 'You are terse.' },
    { role: 'user', content: text },
  ],
  max_tokens: 200,
});

export interface ErrorSuiteOptions {
  sim: () => Simulator;
  adapter: ProviderAdapter;
  provider: ProviderName;
  target: (overrides?: Partial<UpstreamTarget>) => UpstreamTarget;
  /** Credentials the provider refuses, and the status it refuses them with. Default: a wrong API key, 401. */
  badCredentials?: { target: Partial<UpstreamTarget>; status: number };
}

/** The error-mapping cases every adapter must pass. Register inside a describe(). */
export function errorMappingCases(o: ErrorSuiteOptions): void {
  const fault = (rule: Omit<FaultRule, 'match'>, path?: string): void =>
    o.sim().addFault({ match: { provider: o.provider, ...(path ? { path } : {}) }, times: 1, ...rule });
  const call = (t = o.target(), signal = new AbortController().signal) =>
    o.adapter.call(t, simpleChat(), { signal });
  const stream = (t = o.target(), signal = new AbortController().signal) =>
    collect(o.adapter.stream(t, simpleChat(), { signal }));

  it('400 → UPSTREAM_STATUS, not retryable, with the provider message', async () => {
    fault({ status: 400 });
    const err = await failure(() => call());
    expect(err.code).toBe('UPSTREAM_STATUS');
    expect(err.status).toBe(400);
    expect(err.retryable).toBe(false);
    expect(err.providerMessage.length).toBeGreaterThan(0);
  });

  it('429 → retryable, with Retry-After', async () => {
    fault({ status: 429, retryAfter: 3 });
    const err = await failure(() => call());
    expect(err.code).toBe('UPSTREAM_STATUS');
    expect(err.status).toBe(429);
    expect(err.retryable).toBe(true);
    expect(err.retryAfterMs).toBe(3000);
  });

  it('503 → retryable', async () => {
    fault({ status: 503 });
    const err = await failure(() => call());
    expect(err.status).toBe(503);
    expect(err.retryable).toBe(true);
  });

  it('a failing stream throws before the first event', async () => {
    fault({ status: 503 });
    const it = o.adapter.stream(o.target(), simpleChat(), ctx())[Symbol.asyncIterator]();
    const err = await failure(() => it.next());
    expect(err.code).toBe('UPSTREAM_STATUS');
    expect(err.status).toBe(503);
  });

  it('hang → UPSTREAM_TIMEOUT (first-byte timeout), retryable, 504', async () => {
    fault({ hang: true });
    const started = Date.now();
    const t = o.target({ timeouts: { connectMs: 1000, firstByteMs: 150, totalMs: 5000 } });
    const err = await failure(() => call(t));
    expect(err.code).toBe('UPSTREAM_TIMEOUT');
    expect(err.status).toBe(504);
    expect(err.retryable).toBe(true);
    expect(Date.now() - started).toBeLessThan(700);
  });

  it('total deadline → UPSTREAM_TIMEOUT', async () => {
    fault({ delayMs: 2000 });
    const t = o.target({ timeouts: { connectMs: 1000, firstByteMs: 5000, totalMs: 200 } });
    const err = await failure(() => call(t));
    expect(err.code).toBe('UPSTREAM_TIMEOUT');
  });

  it('stream cut → UPSTREAM_STREAM_CUT, retryable', async () => {
    fault({ cutAfterChunks: 3, streamChunks: 10 });
    const got: StreamEvent[] = [];
    const err = await failure(async () => {
      for await (const ev of o.adapter.stream(o.target(), simpleChat(), ctx())) got.push(ev);
    });
    expect(err.code).toBe('UPSTREAM_STREAM_CUT');
    expect(err.retryable).toBe(true);
  });

  it('malformed body → UPSTREAM_BAD_RESPONSE, retryable', async () => {
    fault({ malformed: 'body' });
    const err = await failure(() => call());
    expect(err.code).toBe('UPSTREAM_BAD_RESPONSE');
    expect(err.retryable).toBe(true);
  });

  it('malformed stream chunk → UPSTREAM_BAD_RESPONSE', async () => {
    fault({ malformed: 'chunk' });
    const err = await failure(() => stream());
    expect(err.code).toBe('UPSTREAM_BAD_RESPONSE');
  });

  it('connection reset → UPSTREAM_CONNECT, retryable', async () => {
    fault({ resetConnection: true });
    const err = await failure(() => call());
    expect(err.code).toBe('UPSTREAM_CONNECT');
    expect(err.retryable).toBe(true);
  });

  it('client abort while waiting → UPSTREAM_ABORTED, not retryable', async () => {
    fault({ hang: true });
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const err = await failure(() => call(o.target(), ac.signal));
    expect(err.code).toBe('UPSTREAM_ABORTED');
    expect(err.retryable).toBe(false);
  });

  it('client abort mid-stream → UPSTREAM_ABORTED', async () => {
    fault({ streamChunks: 20, chunkIntervalMs: 30 });
    const ac = new AbortController();
    let seen = 0;
    const err = await failure(async () => {
      for await (const ev of o.adapter.stream(o.target(), simpleChat(), { signal: ac.signal })) {
        if (ev.type === 'delta' && ++seen === 2) ac.abort();
      }
    });
    expect(err.code).toBe('UPSTREAM_ABORTED');
    expect(seen).toBeGreaterThanOrEqual(2);
  });

  it('wrong credentials → 4xx (Gemini answers 400 API_KEY_INVALID, Bedrock 403, the others 401), not retryable', async () => {
    const bad = o.badCredentials ?? {
      target: { apiKey: 'wrong' },
      status: o.provider === 'gemini' ? 400 : 401,
    };
    const err = await failure(() => call(o.target(bad.target)));
    expect(err.status).toBe(bad.status);
    expect(err.retryable).toBe(false);
  });

  it('unsupported kind → UPSTREAM_UNSUPPORTED, not retryable', async () => {
    const kinds = ['embedding', 'image', 'transcription', 'speech'] as const;
    const missing = kinds.find((k) => !o.adapter.supports(k));
    if (!missing) return;
    const req =
      missing === 'embedding'
        ? { kind: 'embedding' as const, input: 'x' }
        : missing === 'image'
          ? { kind: 'image' as const, prompt: 'x' }
          : missing === 'speech'
            ? { kind: 'speech' as const, input: 'x', voice: 'alloy' }
            : {
                kind: 'transcription' as const,
                file: new Uint8Array(4),
                filename: 'a.wav',
                mimeType: 'audio/wav',
              };
    const err = await failure(() => o.adapter.call(o.target(), req, ctx()));
    expect(err.code).toBe('UPSTREAM_UNSUPPORTED');
    expect(err.retryable).toBe(false);
  });
}
