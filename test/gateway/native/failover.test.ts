/** Failover on POST /v1/ai (non-streamed): which failures move on, which stop, and the error bodies. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { provider, workflow } from '../../harness/manifests.ts';
import { type ChatCompletion, type Env, post, startEnv, userMsg, type Wrapped } from './helpers.ts';

const PERSON = {
  type: 'object',
  properties: { name: { type: 'string' }, age: { type: 'integer' } },
  required: ['name', 'age'],
  additionalProperties: false,
};
const OK = { provider: 'claude', model: 'claude-haiku-4-5' };

let env: Env;
beforeAll(async () => {
  const chain = (name: string, primary: { provider: string; model: string }, backups: object[], extra = {}) =>
    workflow(name, { ...primary, backups, ...extra });
  env = await startEnv((simUrl) => [
    // A provider that gives up quickly when no first byte arrives.
    ...provider('quick', 'openai', simUrl, ['hang', 'reset', 'gpt-4o-mini'], {
      timeouts: { connectMs: 500, firstByteMs: 300, totalMs: 1500 },
    }),
    chain('fo-503', { provider: 'oai', model: 'fail-503' }, [OK]),
    chain('fo-429', { provider: 'oai', model: 'fail-429' }, [OK]),
    chain('fo-timeout', { provider: 'quick', model: 'hang' }, [OK]),
    chain('fo-reset', { provider: 'quick', model: 'reset' }, [OK]),
    chain('fo-400', { provider: 'oai', model: 'fail-400' }, [OK], {
      cacheFields: ['metadata.customer_id'],
    }),
    chain(
      'fo-all',
      { provider: 'oai', model: 'fail-503' },
      [
        { provider: 'claude', model: 'fail-503' },
        { provider: 'gem', model: 'fail-429' },
      ],
      { cacheFields: ['metadata.customer_id'] },
    ),
    chain('fo-malformed', { provider: 'oai', model: 'malformed' }, [OK]),
    chain('fo-second-backup', { provider: 'oai', model: 'fail-503' }, [
      { provider: 'gem', model: 'fail-503' },
      { provider: 'azure', model: 'gpt4o-deploy' },
    ]),
    // The simulated Anthropic API answers a prompt-instructed schema with plain text: off-schema.
    chain(
      'fo-schema',
      { provider: 'claude', model: 'claude-haiku-4-5' },
      [{ provider: 'oai', model: 'gpt-4o-mini' }],
      {
        structuredOutput: { schema: PERSON },
      },
    ),
    chain('fo-none', { provider: 'oai', model: 'fail-503' }, []),
  ]);
});
afterAll(async () => env?.close());
beforeEach(() => env.sim.clearRequests());

const call = (wf: string, extra: Record<string, unknown> = {}) =>
  post<Wrapped<ChatCompletion | null>>(env.gw.url, {
    workflow: wf,
    messages: userMsg('failover please'),
    format: 'wrapped',
    ...extra,
  });

describe('retryable failures move to the next slot', () => {
  it('primary 503, backup 200: attempts = [error 503, success]', async () => {
    const r = await call('fo-503');
    expect(r.status).toBe(200);
    const m = r.json.meta;
    expect(m.status).toBe('success');
    expect(m.http_status).toBe(200);
    expect(m.requested_provider).toBe('oai');
    expect(m.requested_model).toBe('fail-503');
    expect(m.used_provider).toBe('claude');
    expect(m.used_model).toBe('claude-haiku-4-5');
    expect(m.attempts).toHaveLength(2);
    expect(m.attempts[0]).toMatchObject({ provider: 'oai', model: 'fail-503', status: 'error' });
    expect(m.attempts[0]!.reason?.status).toBe(503);
    expect(typeof m.attempts[0]!.reason?.message).toBe('string');
    expect(m.attempts[1]).toMatchObject({ provider: 'claude', model: 'claude-haiku-4-5', status: 'success' });
    expect(m.attempts[1]!.reason).toBeUndefined();
    expect(r.json.data?.choices[0]?.message.content).toContain('anthropic');
    expect(env.sim.requests().map((q) => q.provider)).toEqual(['openai', 'anthropic']);
  });

  it('raw format reports the backup in the x-service-used-* headers', async () => {
    const r = await post<ChatCompletion>(env.gw.url, { workflow: 'fo-503', messages: userMsg() });
    expect(r.status).toBe(200);
    expect(r.json.object).toBe('chat.completion');
    expect(r.headers.get('x-service-used-provider')).toBe('claude');
    expect(r.headers.get('x-service-used-model')).toBe('claude-haiku-4-5');
  });

  it('primary 429 moves on', async () => {
    const r = await call('fo-429');
    expect(r.json.meta.used_provider).toBe('claude');
    expect(r.json.meta.attempts.map((a) => [a.status, a.reason?.status])).toEqual([
      ['error', 429],
      ['success', undefined],
    ]);
  });

  it('primary timeout (hang, firstByteMs 300) moves on to the backup', async () => {
    const started = Date.now();
    const r = await call('fo-timeout');
    const took = Date.now() - started;
    expect(r.status).toBe(200);
    expect(r.json.meta.status).toBe('success');
    expect(r.json.meta.used_provider).toBe('claude');
    expect(r.json.meta.attempts[0]).toMatchObject({ provider: 'quick', model: 'hang', status: 'error' });
    expect(r.json.meta.attempts[0]!.reason?.code).toBe('UPSTREAM_TIMEOUT');
    expect(r.json.meta.attempts[1]!.status).toBe('success');
    // The gateway gave up near firstByteMs, not at totalMs.
    expect(took).toBeGreaterThanOrEqual(250);
    expect(took).toBeLessThan(1400);
  });

  it('a connection reset moves on', async () => {
    const r = await call('fo-reset');
    expect(r.json.meta.status).toBe('success');
    expect(r.json.meta.used_provider).toBe('claude');
    expect(r.json.meta.attempts[0]!.status).toBe('error');
  });

  it('malformed upstream JSON moves on', async () => {
    const r = await call('fo-malformed');
    expect(r.status).toBe(200);
    expect(r.json.meta.status).toBe('success');
    expect(r.json.meta.used_provider).toBe('claude');
    expect(r.json.meta.attempts[0]).toMatchObject({ provider: 'oai', model: 'malformed', status: 'error' });
    expect(r.json.meta.attempts[0]!.reason?.code).toBe('UPSTREAM_BAD_RESPONSE');
  });

  it('structured output off-schema moves on to a slot that conforms', async () => {
    const r = await post<Wrapped<Record<string, unknown>>>(env.gw.url, {
      workflow: 'fo-schema',
      messages: userMsg(),
      format: 'wrapped',
    });
    expect(r.status).toBe(200);
    expect(r.json.meta.status).toBe('success');
    expect(r.json.meta.structured_output).toBe(true);
    expect(r.json.meta.attempts).toHaveLength(2);
    expect(r.json.meta.attempts[0]).toMatchObject({ provider: 'claude', status: 'error' });
    expect(r.json.meta.attempts[0]!.reason?.code).toBe('UPSTREAM_BAD_RESPONSE');
    expect(r.json.meta.used_provider).toBe('oai');
    expect(typeof r.json.data.name).toBe('string');
    expect(Number.isInteger(r.json.data.age)).toBe(true);
  });

  it('goes as far down the chain as needed (third slot)', async () => {
    const r = await call('fo-second-backup');
    expect(r.json.meta.status).toBe('success');
    expect(r.json.meta.used_provider).toBe('azure');
    expect(r.json.meta.attempts.map((a) => `${a.provider}:${a.status}`)).toEqual([
      'oai:error',
      'gem:error',
      'azure:success',
    ]);
  });
});

describe('non-retryable failures stop the chain', () => {
  it('primary 400: no backup call, HTTP 200 wrapped error with details.status 400', async () => {
    const r = await call('fo-400', { metadata: { customer_id: 'c-7' } });
    expect(r.status).toBe(200);
    expect(env.sim.requests()).toHaveLength(1);
    expect(env.sim.requests()[0]!.provider).toBe('openai');
    expect(r.json.data).toBeNull();
    expect(r.json.customer_data).toEqual({ 'metadata.customer_id': 'c-7' });
    expect(typeof r.json.error?.message).toBe('string');
    expect(r.json.error?.details.status).toBe(400);
    expect(typeof r.json.error?.details.message).toBe('string');
    expect(r.json.error?.details.message.length).toBeGreaterThan(0);
    const m = r.json.meta;
    expect(m.status).toBe('error');
    expect(m.http_status).toBe(400);
    expect(m.workflow).toBe('fo-400');
    expect(m.attempts).toHaveLength(1);
    expect(m.attempts[0]).toMatchObject({ provider: 'oai', model: 'fail-400', status: 'error' });
    expect(m.attempts[0]!.reason?.status).toBe(400);
    expect(r.json.backups).toEqual([{ position: 1, provider: 'claude', model: 'claude-haiku-4-5' }]);
  });
});

describe('every slot fails', () => {
  it('HTTP 200 wrapped error, meta.http_status 502, one attempt per slot', async () => {
    const r = await call('fo-all', { metadata: { customer_id: 'c-9' } });
    expect(r.status).toBe(200);
    expect(r.json.data).toBeNull();
    expect(r.json.customer_data).toEqual({ 'metadata.customer_id': 'c-9' });
    expect(r.json.error).toBeDefined();
    expect(typeof r.json.error?.message).toBe('string');
    expect(r.json.error?.details.status).toBe(429);
    const m = r.json.meta;
    expect(m.status).toBe('error');
    expect(m.http_status).toBe(502);
    expect(m.workflow).toBe('fo-all');
    expect(m.used_provider).toBeNull();
    expect(m.used_model).toBeNull();
    expect(Number.isInteger(m.duration_ms)).toBe(true);
    expect(m.attempts.map((a) => [a.provider, a.model, a.status, a.reason?.status])).toEqual([
      ['oai', 'fail-503', 'error', 503],
      ['claude', 'fail-503', 'error', 503],
      ['gem', 'fail-429', 'error', 429],
    ]);
    for (const a of m.attempts) expect(typeof a.reason?.message).toBe('string');
    expect(r.json.backups).toEqual([
      { position: 1, provider: 'claude', model: 'fail-503' },
      { position: 2, provider: 'gem', model: 'fail-429' },
    ]);
    expect(env.sim.requests()).toHaveLength(3);
  });

  it('the raw format gives the same wrapped error body (HTTP 200)', async () => {
    const r = await post<Wrapped<null>>(env.gw.url, { workflow: 'fo-none', messages: userMsg() });
    expect(r.status).toBe(200);
    expect(r.json.data).toBeNull();
    expect(r.json.meta.status).toBe('error');
    expect(r.json.meta.http_status).toBe(502);
    expect(r.json.error?.details.status).toBe(503);
    expect(r.json.backups).toEqual([]);
  });

  it('a direct provider+model request that fails also answers with the wrapped error', async () => {
    const r = await post<Wrapped<null>>(env.gw.url, {
      provider: 'oai',
      model: 'fail-503',
      messages: userMsg(),
    });
    expect(r.status).toBe(200);
    expect(r.json.meta.status).toBe('error');
    expect(r.json.meta.workflow).toBeNull();
    expect(r.json.meta.attempts).toHaveLength(1);
  });
});
