/**
 * Whose fault a failure is. The provider's (an UpstreamError) fails over and is reported as
 * upstream_error; the client's (a GatewayError) and the gateway's own (an InternalError) stop the
 * chain at once and are answered as themselves, never as the provider's. And client data that used
 * to reach recursive code deep (tool parameters, tool-call arguments, self-referring schemas) is
 * refused before any provider is called.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError, InternalError } from '#gateway/errors/index';
import { runChain } from '#gateway/routing/chain';
import type { ExecutionPlan } from '#gateway/routing/plan';
import type { RuntimeSlot } from '#gateway/snapshot/runtime';
import { NO_CHAIN } from '#gateway/tracing/off';
import { UpstreamError } from '#gateway/upstream/errors';
import { type Env, type ErrBody, post, startEnv, userMsg, type Wrapped } from '../gateway/native/helpers.ts';
import { PROJECT_ID, provider, workflow } from '../harness/manifests.ts';

let env: Env;
beforeAll(async () => {
  env = await startEnv((simUrl) => [
    ...provider('deep', 'openai', simUrl, ['gpt-4o-mini-deep-5000']),
    workflow('two-slots', {
      provider: 'oai',
      model: 'gpt-4o-mini',
      backups: [{ provider: 'claude', model: 'claude-haiku-4-5' }],
    }),
    workflow('deep-answer', {
      provider: 'deep',
      model: 'gpt-4o-mini-deep-5000',
      backups: [{ provider: 'claude', model: 'claude-haiku-4-5' }],
    }),
    workflow('anthropic', { provider: 'claude', model: 'claude-haiku-4-5' }),
    workflow('gemini', { provider: 'gem', model: 'gemini-2.5-flash' }),
  ]);
});
afterAll(() => env?.close());

const nestedText = (n: number) => `${'{"a":'.repeat(n)}"x"${'}'.repeat(n)}`;
const nestedSchema = (n: number): Record<string, unknown> => {
  let s: Record<string, unknown> = { type: 'string' };
  for (let i = 0; i < n; i++) s = { type: 'object', properties: { a: s } };
  return s;
};

describe('the failover chain tells its failures apart', () => {
  const plan = (): ExecutionPlan => {
    const wf = env.gw.store.current?.projects.get(PROJECT_ID)?.workflows.get('two-slots');
    if (!wf) throw new Error('workflow two-slots not loaded');
    return {
      workflow: wf,
      requestType: 'chat',
      slots: wf.slots,
      testMode: false,
      structured: undefined,
      json: false,
    };
  };
  const run = async (fail: (slot: RuntimeSlot) => unknown) => {
    const tried: string[] = [];
    const result = await runChain(plan(), new AbortController().signal, NO_CHAIN, async (slot) => {
      tried.push(slot.slot);
      throw fail(slot);
    });
    return { result, tried };
  };

  it('a provider failure (UpstreamError, retryable) moves on to the backup', async () => {
    const { result, tried } = await run(
      () => new UpstreamError('503', { code: 'UPSTREAM_STATUS', status: 503 }),
    );
    expect(tried).toEqual(['primary', 'backup-1']);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.refusal).toBeUndefined();
  });

  it("the gateway's own exception stops the chain as an InternalError: no backup, no upstream_error", async () => {
    const { result, tried } = await run(
      () => new TypeError("Cannot read properties of undefined (reading 'x')"),
    );
    expect(tried).toEqual(['primary']);
    if (result.ok) throw new Error('the chain succeeded');
    expect(result.refusal).toBeInstanceOf(InternalError);
    expect(result.refusal?.status).toBe(503);
    expect(result.refusal?.code).toBe('service_unavailable');
    expect(result.attempts).toHaveLength(1);
    expect(result.attempts[0]?.reason?.code).toBe('service_unavailable');
  });

  it("a refusal found inside an attempt (GatewayError) is answered as the client's", async () => {
    const refusal = new GatewayError('invalid_request', 'bad schema', { param: 'response_format' });
    const { result, tried } = await run(() => refusal);
    expect(tried).toEqual(['primary']);
    if (result.ok) throw new Error('the chain succeeded');
    expect(result.refusal).toBe(refusal);
  });
});

describe('client data that reached recursive code is refused up front', () => {
  it('tools[].function.parameters nested 5,000 deep: 400 naming the problem, no provider called (both surfaces)', async () => {
    env.sim.clearRequests();
    const tools = (params: string) => `[{"type":"function","function":{"name":"f","parameters":${params}}}]`;
    const native = await post<ErrBody>(env.gw.url, null, {
      raw: `{"workflow":"anthropic","messages":[{"role":"user","content":"hi"}],"tools":${tools(nestedText(5000))}}`,
    });
    expect(native.status).toBe(400);
    expect(native.json.error).toBe('invalid_request');
    expect(native.json.message).toMatch(/more than 64 levels deep/);
    const compat = await post<{ error: { type: string; message: string } }>(env.gw.url, null, {
      path: '/v1/chat/completions',
      raw: `{"model":"gemini","messages":[{"role":"user","content":"hi"}],"tools":${tools(nestedText(5000))}}`,
    });
    expect(compat.status).toBe(400);
    expect(compat.json.error.type).toBe('invalid_request_error');
    expect(env.sim.requests()).toHaveLength(0);
  });

  it('tool parameters 60 levels deep (within the limit) reach Anthropic and Gemini and answer 200', async () => {
    for (const wf of ['anthropic', 'gemini']) {
      const r = await post(env.gw.url, {
        workflow: wf,
        messages: userMsg(),
        tools: [{ type: 'function', function: { name: 'f', parameters: nestedSchema(28) } }],
        tool_choice: 'auto',
      });
      expect(r.status, `${wf}: ${r.text.slice(0, 300)}`).toBe(200);
    }
  });

  it('tool-call arguments (a JSON string) nested 5,000 deep: 400, where Anthropic needs them as an object', async () => {
    env.sim.clearRequests();
    const r = await post<ErrBody>(env.gw.url, {
      workflow: 'anthropic',
      messages: [
        { role: 'user', content: 'look it up' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: nestedText(5000) } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: nestedText(5000) },
      ],
    });
    expect(r.status).toBe(400);
    expect(r.json.param).toBe('messages[1].tool_calls[0].function.arguments');
    expect(env.sim.requests()).toHaveLength(0);
  });

  it('a Gemini tool result that is JSON nested 5,000 deep is passed on as text, not parsed', async () => {
    const r = await post(env.gw.url, {
      workflow: 'gemini',
      messages: [
        { role: 'user', content: 'look it up' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        { role: 'tool', tool_call_id: 'c1', content: nestedText(5000) },
      ],
    });
    expect(r.status, r.text.slice(0, 300)).toBe(200);
  });

  it('a structured-output schema that refers to itself without end: 400 before any provider call', async () => {
    env.sim.clearRequests();
    for (const schema of [
      { allOf: [{ $ref: '#' }] },
      { type: 'object', allOf: [{ $ref: '#' }, { $ref: '#' }] },
    ]) {
      const r = await post<ErrBody>(env.gw.url, {
        workflow: 'two-slots',
        messages: userMsg(),
        response_format: schema,
      });
      expect(r.status).toBe(400);
      expect(r.json.param).toBe('response_format');
      expect(r.json.message).toMatch(/refers to itself without end/);
    }
    expect(env.sim.requests()).toHaveLength(0);
  });
});

describe("a provider's answer nested deeper than anything real", () => {
  it('is the provider failing (UPSTREAM_BAD_RESPONSE): the backup answers, attempts say why', async () => {
    const r = await post<Wrapped>(env.gw.url, {
      workflow: 'deep-answer',
      messages: userMsg(),
      format: 'wrapped',
    });
    expect(r.status).toBe(200);
    expect(r.json.meta.status).toBe('success');
    expect(r.json.meta.used_provider).toBe('claude');
    const [primary] = r.json.meta.attempts;
    expect(primary?.status).toBe('error');
    expect(primary?.reason?.code).toBe('UPSTREAM_BAD_RESPONSE');
    expect(primary?.reason?.message).toMatch(/more than 256 levels deep/);
  });
});
