/**
 * The failover chain (routing/chain.ts) driven directly: each slot is a real adapter call to the
 * provider simulator, the slot guard is the spend feature's own on an in-memory store. Every test
 * asserts the attempts trail as `meta.attempts` reports it, and which slots the simulator saw.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CanonicalResult } from '#gateway/providers/types';
import { runChain } from '#gateway/routing/chain';
import { adapterFor, type ExecutionPlan } from '#gateway/routing/plan';
import type { Runtime } from '#gateway/snapshot/runtime';
import { NO_ATTEMPT, NO_CHAIN } from '#gateway/tracing/off';
import { UpstreamError } from '#gateway/upstream/errors';
import { closeUpstreamPools } from '#gateway/upstream/http';
import { API_KEY, apiKey, project, provider, workflow } from '../harness/manifests.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import { spendCap } from '../spend/manifests.ts';
import { chat, compileRuntime, FAST, ms, prepared, spendCaps } from './helpers.ts';

const FAULTS = ['fail-503', 'fail-429', 'fail-400', 'fail-422', 'hang', 'reset', 'malformed'];
const OK = { provider: 'oai', model: 'gpt-4o-mini' };

let sim: Simulator;
let runtime: Runtime;
let caps: ReturnType<typeof spendCaps>;

beforeAll(async () => {
  sim = await startSimulator();
  runtime = await compileRuntime([
    project(),
    ...apiKey('main', API_KEY),
    ...provider('oai', 'openai', sim.url, ['gpt-4o-mini', ...FAULTS], FAST),
    ...provider('claude', 'anthropic', sim.url, ['claude-haiku-4-5'], FAST),
    ...provider('gem', 'gemini', sim.url, ['gemini-2.5-flash'], FAST),
    workflow('single', OK),
    // One workflow per fault: the fault on the primary, a healthy backup.
    ...FAULTS.map((f) => workflow(`then-ok-${f}`, { provider: 'oai', model: f, backups: [OK] })),
    workflow('all-fail', {
      provider: 'oai',
      model: 'fail-503',
      backups: [{ provider: 'oai', model: 'fail-429' }],
    }),
    workflow('claude-then-oai', { provider: 'claude', model: 'claude-haiku-4-5', backups: [OK] }),
    workflow('claude-then-gem', {
      provider: 'claude',
      model: 'claude-haiku-4-5',
      backups: [{ provider: 'gem', model: 'gemini-2.5-flash' }],
    }),
    workflow('claude-then-503', {
      provider: 'claude',
      model: 'claude-haiku-4-5',
      backups: [{ provider: 'oai', model: 'fail-503' }],
    }),
    workflow('primary-capped', { ...OK, backups: [{ provider: 'claude', model: 'claude-haiku-4-5' }] }),
    spendCap('primary-capped-primary', { workflow: 'primary-capped', period: 'daily', limitUsd: '0' }),
    workflow('all-capped', { ...OK, backups: [{ provider: 'claude', model: 'claude-haiku-4-5' }] }),
    spendCap('all-capped-primary', { workflow: 'all-capped', period: 'daily', limitUsd: '0' }),
    spendCap('all-capped-backup', {
      workflow: 'all-capped',
      slot: 'backup-1',
      period: 'hourly',
      limitUsd: '0',
    }),
    // A cap on backup-1 below one request's estimate (about $0.0082 at 4,096 output tokens): a
    // request is let in while the cap has room, so the first one is, and the next finds it full
    // for as long as that one's hold stands.
    workflow('backup-room-for-one-fails', {
      provider: 'oai',
      model: 'fail-503',
      backups: [{ provider: 'oai', model: 'fail-429' }],
    }),
    spendCap('room-for-one-fails', {
      workflow: 'backup-room-for-one-fails',
      slot: 'backup-1',
      period: 'daily',
      limitUsd: '0.005',
    }),
    workflow('backup-room-for-one-answers', { provider: 'oai', model: 'fail-503', backups: [OK] }),
    spendCap('room-for-one-answers', {
      workflow: 'backup-room-for-one-answers',
      slot: 'backup-1',
      period: 'daily',
      limitUsd: '0.005',
    }),
  ]);
  caps = spendCaps(runtime);
});
afterAll(async () => {
  await caps?.close();
  await closeUpstreamPools();
  await sim?.close();
});
beforeEach(() => sim.clearRequests());

/**
 * Runs the chain for a native chat body as the pipeline would: real adapters, the spend guard of a
 * new exchange, which then ends (unless `keep`: its holds stay, as a request still running keeps them).
 */
async function chain(
  wf: string,
  extra: Record<string, unknown> = {},
  signal = new AbortController().signal,
  keep = false,
) {
  const p = prepared(runtime, chat(wf, extra));
  const spend = await caps.begin(p);
  const plan: ExecutionPlan = { ...p.plan, guard: spend.guard };
  try {
    return await runChain<CanonicalResult>(plan, signal, NO_CHAIN, (slot, ctx) =>
      adapterFor(plan, slot).call(slot.target, p.request, ctx),
    );
  } finally {
    if (!keep) spend.finish();
  }
}

/** The models the simulator was sent requests for, in order. */
const called = (): string[] => sim.requests().map((r) => String((r.body as { model?: unknown }).model));

const success = (provider: string, model: string) => ({
  provider,
  model,
  status: 'success',
  duration_ms: ms,
});

describe('runChain', () => {
  it('a primary that answers is the only attempt, and its answer and slot are handed back', async () => {
    const r = await chain('single');
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.attempts).toEqual([success('oai', 'gpt-4o-mini')]);
    expect(r.slot.slot).toBe('primary');
    expect(r.value).toMatchObject({
      kind: 'chat',
      content: 'Simulated openai/gpt-4o-mini reply: Where is my order?',
    });
    expect(r.span).toBe(NO_ATTEMPT);
    expect(called()).toEqual(['gpt-4o-mini']);
  });

  const retryable: [string, { message: string | RegExp; status: number; code: string }][] = [
    [
      'fail-503',
      {
        message: 'The engine is currently overloaded, please try again later.',
        status: 503,
        code: 'UPSTREAM_STATUS',
      },
    ],
    [
      'fail-429',
      {
        message: 'Rate limit reached for requests. Please try again later.',
        status: 429,
        code: 'UPSTREAM_STATUS',
      },
    ],
    [
      'hang',
      { message: 'upstream sent no response headers within 200ms', status: 504, code: 'UPSTREAM_TIMEOUT' },
    ],
    ['reset', { message: 'read ECONNRESET', status: 502, code: 'UPSTREAM_CONNECT' }],
    // The reason of an unreadable answer is its first 200 characters.
    ['malformed', { message: /^\{"id":"chatcmpl-.{184}…$/, status: 502, code: 'UPSTREAM_BAD_RESPONSE' }],
  ];
  it.each(retryable)('a retryable failure (%s) moves on to the next slot', async (fault, reason) => {
    const r = await chain(`then-ok-${fault}`);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.attempts).toEqual([
      {
        provider: 'oai',
        model: fault,
        status: 'error',
        reason: {
          ...reason,
          message:
            typeof reason.message === 'string' ? reason.message : expect.stringMatching(reason.message),
        },
        duration_ms: ms,
      },
      success('oai', 'gpt-4o-mini'),
    ]);
    expect(r.slot.slot).toBe('backup-1');
    expect(called()).toEqual([fault, 'gpt-4o-mini']);
  });

  it.each([
    ['fail-400', 400, 'Invalid request.'],
    ['fail-422', 422, 'Request failed with status 422.'],
  ])(
    'a provider 4xx for the input (%s) stops the chain: the backup is not called',
    async (fault, status, message) => {
      const r = await chain(`then-ok-${fault}`);
      expect(r.ok).toBe(false);
      if (r.ok) return;
      expect(r.attempts).toEqual([
        {
          provider: 'oai',
          model: fault,
          status: 'error',
          reason: { message, status, code: 'UPSTREAM_STATUS' },
          duration_ms: ms,
        },
      ]);
      expect(r.error).toBeInstanceOf(UpstreamError);
      expect(r.error.status).toBe(status);
      expect(r.error.httpStatus).toBe(status);
      expect(r.refusal).toBeUndefined();
      expect(r.allSkipped).toBe(false);
      expect(called()).toEqual([fault]);
    },
  );

  it('every slot failing: the last failure is the error, every attempt is in the trail', async () => {
    const r = await chain('all-fail');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.attempts).toEqual([
      {
        provider: 'oai',
        model: 'fail-503',
        status: 'error',
        reason: {
          message: 'The engine is currently overloaded, please try again later.',
          status: 503,
          code: 'UPSTREAM_STATUS',
        },
        duration_ms: ms,
      },
      {
        provider: 'oai',
        model: 'fail-429',
        status: 'error',
        reason: {
          message: 'Rate limit reached for requests. Please try again later.',
          status: 429,
          code: 'UPSTREAM_STATUS',
        },
        duration_ms: ms,
      },
    ]);
    expect(r.error.status).toBe(429);
    expect(r.error.httpStatus).toBe(502);
    expect(r.refusal).toBeUndefined();
    expect(r.allSkipped).toBe(false);
  });

  it('a client that went away stops the chain on the slot it was waiting for', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const r = await chain('then-ok-hang', {}, ac.signal);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.attempts).toEqual([
      {
        provider: 'oai',
        model: 'hang',
        status: 'error',
        reason: { message: 'client aborted the request', code: 'UPSTREAM_ABORTED' },
        duration_ms: ms,
      },
    ]);
    expect(r.error.code).toBe('UPSTREAM_ABORTED');
    expect(called()).toEqual(['hang']);
  });
});

describe('runChain: parameters a slot cannot honour', () => {
  const cannot = (param: string) => ({
    provider: 'claude',
    model: 'claude-haiku-4-5',
    status: 'error',
    reason: {
      message: `anthropic cannot honour the parameter "${param}": the Messages API has no equivalent`,
      code: 'UPSTREAM_UNSUPPORTED',
    },
    duration_ms: ms,
  });

  it('the slot is passed over, nothing is sent to it, and a slot that can honour it answers', async () => {
    const r = await chain('claude-then-oai', { presence_penalty: 0.5 });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.attempts).toEqual([cannot('presence_penalty'), success('oai', 'gpt-4o-mini')]);
    expect(called()).toEqual(['gpt-4o-mini']);
  });

  it('no slot can: the client is refused 400 unsupported_parameter naming the parameter, no provider is called', async () => {
    const r = await chain('claude-then-gem', { logit_bias: { '12': 3 } });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.attempts).toEqual([
      cannot('logit_bias'),
      {
        provider: 'gem',
        model: 'gemini-2.5-flash',
        status: 'error',
        reason: {
          message: 'gemini cannot honour the parameter "logit_bias": the Gemini API has no equivalent',
          code: 'UPSTREAM_UNSUPPORTED',
        },
        duration_ms: ms,
      },
    ]);
    expect(r.refusal).toMatchObject({
      code: 'unsupported_parameter',
      status: 400,
      param: 'logit_bias',
      message:
        'No provider of this workflow can serve the request: anthropic cannot honour the parameter "logit_bias": the Messages API has no equivalent; gemini cannot honour the parameter "logit_bias": the Gemini API has no equivalent.',
    });
    expect(r.error.code).toBe('UPSTREAM_UNSUPPORTED');
    expect(r.allSkipped).toBe(false);
    expect(called()).toEqual([]);
  });

  it('a slot that cannot, then a provider failure: the failure is what the client hears, not a refusal', async () => {
    const r = await chain('claude-then-503', { presence_penalty: 0.5 });
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.attempts).toEqual([
      cannot('presence_penalty'),
      {
        provider: 'oai',
        model: 'fail-503',
        status: 'error',
        reason: {
          message: 'The engine is currently overloaded, please try again later.',
          status: 503,
          code: 'UPSTREAM_STATUS',
        },
        duration_ms: ms,
      },
    ]);
    expect(r.refusal).toBeUndefined();
    expect(r.error.status).toBe(503);
  });
});

describe('runChain: slots over their spend cap', () => {
  it('a capped slot is skipped (not called, no duration) and the chain moves on', async () => {
    const r = await chain('primary-capped');
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.attempts).toEqual([
      {
        provider: 'oai',
        model: 'gpt-4o-mini',
        status: 'skipped',
        reason: { message: 'spend cap team/primary-capped-primary (daily, $0) on primary is reached' },
      },
      success('claude', 'claude-haiku-4-5'),
    ]);
    expect(r.slot.slot).toBe('backup-1');
    expect(called()).toEqual(['claude-haiku-4-5']);
  });

  it('every slot skipped: allSkipped, no provider called, no refusal of the input', async () => {
    const r = await chain('all-capped');
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.attempts).toEqual([
      {
        provider: 'oai',
        model: 'gpt-4o-mini',
        status: 'skipped',
        reason: { message: 'spend cap team/all-capped-primary (daily, $0) on primary is reached' },
      },
      {
        provider: 'claude',
        model: 'claude-haiku-4-5',
        status: 'skipped',
        reason: { message: 'spend cap team/all-capped-backup (hourly, $0) on backup-1 is reached' },
      },
    ]);
    expect(r.allSkipped).toBe(true);
    expect(r.refusal).toBeUndefined();
    expect(r.error).toMatchObject({
      code: 'UPSTREAM_UNSUPPORTED',
      message: 'every slot of the failover chain was skipped',
    });
    expect(called()).toEqual([]);
  });

  it('a slot that failed gives its hold back at once: the next exchange still finds room on it', async () => {
    const trail = [
      {
        provider: 'oai',
        model: 'fail-503',
        status: 'error',
        reason: {
          message: 'The engine is currently overloaded, please try again later.',
          status: 503,
          code: 'UPSTREAM_STATUS',
        },
        duration_ms: ms,
      },
      {
        provider: 'oai',
        model: 'fail-429',
        status: 'error',
        reason: {
          message: 'Rate limit reached for requests. Please try again later.',
          status: 429,
          code: 'UPSTREAM_STATUS',
        },
        duration_ms: ms,
      },
    ];
    // Neither exchange ends: only the release on failure can have made room for the second.
    const first = await chain('backup-room-for-one-fails', {}, undefined, true);
    const second = await chain('backup-room-for-one-fails', {}, undefined, true);
    expect(first.attempts).toEqual(trail);
    expect(second.attempts).toEqual(trail);
  });

  it('a slot that answered keeps its hold until its exchange ends: the next one finds it over its cap', async () => {
    const first = await chain('backup-room-for-one-answers', {}, undefined, true);
    expect(first.attempts.map((a) => a.status)).toEqual(['error', 'success']);
    const second = await chain('backup-room-for-one-answers');
    expect(second.attempts.slice(1)).toEqual([
      {
        provider: 'oai',
        model: 'gpt-4o-mini',
        status: 'skipped',
        reason: { message: 'spend cap team/room-for-one-answers (daily, $0.005) on backup-1 is reached' },
      },
    ]);
  });
});
