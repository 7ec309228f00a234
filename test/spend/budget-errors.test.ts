import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { microsToUsd } from '#contract';
import { keyWith, post, userMsg, type Wrapped } from '../gateway/native/helpers.ts';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { API_KEY, apiKey, baseConfig, project, provider, workflow } from '../harness/manifests.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import { simCostMicros, spendCap, workflowOf } from './manifests.ts';

/**
 * Every budget and rate-limit refusal, field by field, on the native and the compatible surface,
 * and through the official `openai` SDK (its error classes, and its built-in retry honouring
 * Retry-After). Embedded-mode state (memory adapter) with a clock shifted to a known Monday.
 */

const SPENDER_KEY = 'sy_live_SpenderProjectKey0123456789abcdef';
const UNPRICED_KEY = 'sy_live_UnpricedProjectKey0123456789abcde';
const CACHED_KEY = 'sy_live_CachedProjectKey0123456789abcdefg';
const LIMITED_KEY = 'sy_live_RateLimitedKey0123456789abcdefghij';
const T0 = Date.parse('2026-11-23T10:15:00.000Z');

function config(simUrl: string) {
  const noPricing = provider('free', 'openai', simUrl, ['gpt-4o-mini']).map((o) =>
    'spec' in o
      ? { ...o, spec: { ...o.spec, models: [{ name: 'gpt-4o-mini', requestTypes: ['chat'] }] } }
      : o,
  );
  return [
    ...baseConfig(simUrl),
    ...noPricing,
    workflow('all-capped', {
      provider: 'oai',
      model: 'gpt-4o-mini',
      backups: [{ provider: 'claude', model: 'claude-haiku-4-5' }],
    }),
    spendCap('all-capped-primary', {
      workflow: 'all-capped',
      slot: 'primary',
      period: 'daily',
      limitUsd: '0',
    }),
    spendCap('all-capped-backup', {
      workflow: 'all-capped',
      slot: 'backup-1',
      period: 'hourly',
      limitUsd: '0',
    }),
    workflow('primary-capped', {
      provider: 'oai',
      model: 'gpt-4o-mini',
      backups: [{ provider: 'claude', model: 'claude-haiku-4-5' }],
    }),
    spendCap('primary-capped-primary', {
      workflow: 'primary-capped',
      slot: 'primary',
      period: 'weekly',
      limitUsd: '0',
    }),
    workflow('wf-unpriced', { provider: 'free', model: 'gpt-4o-mini' }),
    spendCap('wf-unpriced-primary', {
      workflow: 'wf-unpriced',
      slot: 'primary',
      period: 'daily',
      limitUsd: '5',
    }),
    workflow('plain', { provider: 'oai', model: 'gpt-4o-mini' }),
    ...keyWith('limited', LIMITED_KEY, { rateLimit: { requestsPerMinute: 60 } }),
    project('spender'),
    ...apiKey('spender', SPENDER_KEY, { project: 'spender' }),
    workflowOf('spender', 'spender-chat', { provider: 'oai', model: 'gpt-4o-mini' }),
    spendCap('spender-daily', { project: 'spender', period: 'daily', limitUsd: '0.00001' }),
    project('cached'),
    ...apiKey('cached', CACHED_KEY, { project: 'cached' }),
    workflowOf('cached', 'cached-chat', {
      provider: 'oai',
      model: 'gpt-4o-mini',
      responseCache: { ttlSeconds: 600 },
    }),
    spendCap('cached-daily', { project: 'cached', period: 'daily', limitUsd: '0.00001' }),
    project('unpriced'),
    ...apiKey('unpriced', UNPRICED_KEY, { project: 'unpriced' }),
    workflowOf('unpriced', 'unpriced-chat', { provider: 'free', model: 'gpt-4o-mini' }),
    spendCap('unpriced-monthly', { project: 'unpriced', period: 'monthly', limitUsd: '10' }),
  ];
}

interface BudgetError {
  message: string;
  type: string;
  code?: string;
  error?: string;
  param?: string | null;
  scope: string;
  workflow?: string;
  attempts?: { provider: string; model: string; status: string; reason: { message: string } }[];
  cap_usd?: string;
  spent_usd?: string;
  period?: string;
  reset_at?: string;
}

const native = (url: string, workflow: string, key: string) =>
  post<BudgetError & Wrapped>(url, { workflow, messages: userMsg() }, { key });
const compat = (url: string, model: string, key: string) =>
  post<{ error: BudgetError }>(url, { model, messages: userMsg() }, { key, path: '/v1/chat/completions' });

describe('budget and rate-limit refusals on both surfaces', () => {
  let sim: Simulator;
  let gw: RunningGateway;
  const started = Date.now();
  beforeAll(async () => {
    sim = await startSimulator();
    gw = await startGateway(config(sim.url), { now: () => T0 + (Date.now() - started) });
  });
  afterAll(async () => {
    await gw?.close();
    await sim?.close();
  });

  it('402 workflow_budget_exceeded: every slot skipped, no provider called, the same error fields on both surfaces', async () => {
    sim.clearRequests();
    const n = await native(gw.url, 'all-capped', API_KEY);
    const c = await compat(gw.url, 'all-capped', API_KEY);
    expect(sim.requests()).toHaveLength(0);
    const attempts = [
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
    ];
    const message = 'Every model of workflow "all-capped" is over its spend cap; no provider was called.';
    expect(n.status).toBe(402);
    expect(n.json).toEqual({
      error: 'workflow_budget_exceeded',
      message,
      type: 'budget_exceeded',
      scope: 'workflow',
      workflow: 'all-capped',
      attempts,
    });
    expect(c.status).toBe(402);
    expect(c.json).toEqual({
      error: {
        message,
        type: 'budget_exceeded',
        param: null,
        code: 'workflow_budget_exceeded',
        scope: 'workflow',
        workflow: 'all-capped',
        attempts,
      },
    });
  });

  it('a slot over its cap is skipped and the chain moves on to the next', async () => {
    const r = await post<Wrapped>(gw.url, {
      workflow: 'primary-capped',
      messages: userMsg(),
      format: 'wrapped',
    });
    expect(r.status).toBe(200);
    expect(r.json.meta.used_provider).toBe('claude');
    expect(r.json.meta.attempts[0]).toEqual({
      provider: 'oai',
      model: 'gpt-4o-mini',
      status: 'skipped',
      reason: { message: 'spend cap team/primary-capped-primary (weekly, $0) on primary is reached' },
    });
    expect(r.json.meta.attempts[1]).toMatchObject({ provider: 'claude', status: 'success' });
  });

  it('422 workflow_budget_config_error: a capped slot without pricing', async () => {
    sim.clearRequests();
    const n = await native(gw.url, 'wf-unpriced', API_KEY);
    const c = await compat(gw.url, 'wf-unpriced', API_KEY);
    expect(sim.requests()).toHaveLength(0);
    const attempts = [
      {
        provider: 'free',
        model: 'gpt-4o-mini',
        status: 'skipped',
        reason: { message: 'primary is capped but model "gpt-4o-mini" has no pricing for this request' },
      },
    ];
    const message =
      'A capped model of workflow "wf-unpriced" cannot be evaluated: its pricing does not cover this request.';
    const hint = 'Set the model pricing on the Provider, or remove the workflow SpendCap.';
    expect(n.status).toBe(422);
    expect(n.json).toEqual({
      error: 'workflow_budget_config_error',
      message,
      hint,
      type: 'budget_config_error',
      scope: 'workflow',
      workflow: 'wf-unpriced',
      attempts,
    });
    expect(c.status).toBe(422);
    expect(c.json).toEqual({
      error: {
        message: `${message} ${hint}`,
        type: 'budget_config_error',
        param: null,
        code: 'workflow_budget_config_error',
        scope: 'workflow',
        workflow: 'wf-unpriced',
        attempts,
      },
    });
  });

  it('422 project_budget_config_error: unknown pricing blocks even below the cap', async () => {
    sim.clearRequests();
    const n = await native(gw.url, 'unpriced-chat', UNPRICED_KEY);
    const c = await compat(gw.url, 'unpriced-chat', UNPRICED_KEY);
    expect(sim.requests()).toHaveLength(0);
    const message =
      'The project spend cap cannot be enforced: model "gpt-4o-mini" of provider "free" has no USD pricing for this request.';
    const hint = 'Set the model pricing on the Provider, or remove the project SpendCap.';
    expect(n.status).toBe(422);
    expect(n.json).toEqual({
      error: 'project_budget_config_error',
      message,
      hint,
      type: 'budget_config_error',
      scope: 'project',
    });
    expect(c.status).toBe(422);
    expect(c.json).toEqual({
      error: {
        message: `${message} ${hint}`,
        type: 'budget_config_error',
        param: null,
        code: 'project_budget_config_error',
        scope: 'project',
      },
    });
  });

  it('402 project_budget_exceeded with cap, spend, period and reset, before failover; the SDK raises a 402 APIError', async () => {
    const first = await post<Wrapped>(
      gw.url,
      { workflow: 'spender-chat', messages: userMsg(), format: 'wrapped' },
      { key: SPENDER_KEY },
    );
    expect(first.status).toBe(200);
    const cost = simCostMicros(first.json.meta.usage as { prompt_tokens: number; completion_tokens: number });
    expect(cost).toBeGreaterThan(10); // over the $0.00001 cap after one request
    sim.clearRequests();
    const n = await native(gw.url, 'spender-chat', SPENDER_KEY);
    const c = await compat(gw.url, 'spender-chat', SPENDER_KEY);
    expect(sim.requests()).toHaveLength(0);
    const fields = {
      scope: 'project',
      cap_usd: '0.00001',
      spent_usd: microsToUsd(cost),
      period: 'daily',
      reset_at: '2026-11-24T00:00:00.000Z',
    };
    const message = `The project's daily spend cap of $0.00001 is reached (spent $${microsToUsd(cost)}); it resets at 2026-11-24T00:00:00.000Z.`;
    expect(n.status).toBe(402);
    expect(n.json).toEqual({ error: 'project_budget_exceeded', message, type: 'budget_exceeded', ...fields });
    expect(c.status).toBe(402);
    expect(c.json).toEqual({
      error: { message, type: 'budget_exceeded', param: null, code: 'project_budget_exceeded', ...fields },
    });

    const sdk = new OpenAI({ apiKey: SPENDER_KEY, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const err = await sdk.chat.completions
      .create({ model: 'spender-chat', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    const api = err as InstanceType<typeof OpenAI.APIError>;
    expect(api.status).toBe(402);
    expect(api.code).toBe('project_budget_exceeded');
    expect(api.type).toBe('budget_exceeded');
    expect(api.error).toMatchObject(fields);
  });

  it('a cache hit at zero price passes a reached project cap; a miss does not', async () => {
    const ask = (content: string) =>
      post(gw.url, { workflow: 'cached-chat', messages: userMsg(content) }, { key: CACHED_KEY });
    const first = await ask('what are your hours?');
    expect(first.status).toBe(200);
    expect(first.headers.get('x-service-cache')).toBe('miss');
    sim.clearRequests();
    const hit = await ask('what are your hours?');
    expect(hit.status).toBe(200);
    expect(hit.headers.get('x-service-cache')).toBe('hit');
    const miss = await post<BudgetError & Wrapped>(
      gw.url,
      { workflow: 'cached-chat', messages: userMsg('something new') },
      { key: CACHED_KEY },
    );
    expect(miss.status).toBe(402);
    expect(miss.json).toMatchObject({
      error: 'project_budget_exceeded',
      scope: 'project',
      cap_usd: '0.00001',
    });
    expect(sim.requests()).toHaveLength(0);
  });

  it('429 rate_limit_exceeded with Retry-After and x-ratelimit-*, on both surfaces; the SDK raises RateLimitError, and its retry waits and succeeds', async () => {
    // 60 a minute: a minute's worth at once, then one a second.
    const burst = await Promise.all(Array.from({ length: 60 }, () => native(gw.url, 'plain', LIMITED_KEY)));
    expect(burst.map((r) => r.status)).toEqual(Array(60).fill(200));
    // Admitted answers carry the limit's state too, as OpenAI's do.
    const left = burst.map((r) => Number(r.headers.get('x-ratelimit-remaining-requests')));
    expect(burst.every((r) => r.headers.get('x-ratelimit-limit-requests') === '60')).toBe(true);
    expect(Math.max(...left)).toBe(59);
    expect(Math.min(...left)).toBeLessThanOrEqual(1);
    expect(burst[0]!.headers.get('x-ratelimit-reset-requests')).toMatch(/^\d+(\.\d+)?(ms|s)$|^1m0s$/);
    const n = await native(gw.url, 'plain', LIMITED_KEY);
    expect(n.status).toBe(429);
    expect(n.json.error).toBe('rate_limit_exceeded');
    expect(n.json.message).toMatch(
      /^Rate limit of 60 requests per minute for this API key reached\. Please try again in 0\.\d{3}s\.$|^Rate limit of 60 requests per minute for this API key reached\. Please try again in 1\.000s\.$/,
    );
    expect(n.headers.get('retry-after')).toBe('1');
    expect(Number(n.headers.get('retry-after-ms'))).toBeGreaterThan(0);
    expect(Number(n.headers.get('retry-after-ms'))).toBeLessThanOrEqual(1000);
    expect(n.headers.get('x-ratelimit-limit-requests')).toBe('60');
    expect(n.headers.get('x-ratelimit-remaining-requests')).toBe('0');
    expect(n.headers.get('x-ratelimit-reset-requests')).toMatch(/^(59\.\d+s|1m0s)$/);
    expect(n.headers.get('x-ratelimit-limit-tokens')).toBeNull();

    const c = await compat(gw.url, 'plain', LIMITED_KEY);
    expect(c.status).toBe(429);
    expect(c.json.error).toMatchObject({
      type: 'rate_limit_error',
      code: 'rate_limit_exceeded',
      param: null,
    });
    expect(c.json.error.message).toMatch(/Please try again in \d\.\d{3}s\.$/);
    expect(c.headers.get('retry-after')).toBe('1');

    const noRetry = new OpenAI({ apiKey: LIMITED_KEY, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const err = await noRetry.chat.completions
      .create({ model: 'plain', messages: [{ role: 'user', content: 'hi' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.RateLimitError);
    expect(
      (err as InstanceType<typeof OpenAI.RateLimitError>).headers.get('x-ratelimit-limit-requests'),
    ).toBe('60');

    const retrying = new OpenAI({ apiKey: LIMITED_KEY, baseURL: `${gw.url}/v1`, maxRetries: 2 });
    const t = performance.now();
    const { data, response } = await retrying.chat.completions
      .create({ model: 'plain', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse();
    const waited = performance.now() - t;
    expect(response.status).toBe(200);
    expect(data.choices[0]?.message.content).toContain('Simulated openai/gpt-4o-mini reply');
    // It waited as told (retry-after-ms), not its own backoff of ~0.5 s, and not much longer.
    console.log(`SDK retried after ${waited.toFixed(0)} ms`);
    expect(waited).toBeGreaterThan(300);
    expect(waited).toBeLessThan(2500);
  });
});
