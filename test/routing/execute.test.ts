/**
 * One request through the chain (routing/execute.ts): structured output is checked inside the
 * attempt, so an answer off its schema fails over like a provider failure; test mode answers with
 * no provider called. Upstream: the provider simulator.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { CanonicalResult } from '#gateway/providers/types';
import { execute, structuredValue } from '#gateway/routing/execute';
import type { Runtime } from '#gateway/snapshot/runtime';
import { NO_CHAIN } from '#gateway/tracing/off';
import { closeUpstreamPools } from '#gateway/upstream/http';
import { API_KEY, apiKey, project, provider, workflow } from '../harness/manifests.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import { chat, compileRuntime, FAST, ms, prepared } from './helpers.ts';

const PERSON = {
  type: 'object',
  properties: { name: { type: 'string' }, age: { type: 'integer' } },
  required: ['name', 'age'],
  additionalProperties: false,
};
const WEATHER_TOOL = {
  type: 'function',
  function: {
    name: 'get_weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

let sim: Simulator;
let runtime: Runtime;

beforeAll(async () => {
  sim = await startSimulator();
  runtime = await compileRuntime([
    project(),
    ...apiKey('main', API_KEY),
    ...provider('oai', 'openai', sim.url, ['gpt-4o-mini', 'fail-503'], FAST),
    // Driven in json_object mode: the simulator answers {"reply": ...}, whatever the schema.
    ...provider('compat', 'openai-compatible', sim.url, ['llama'], FAST),
    workflow('compat-first', {
      provider: 'compat',
      model: 'llama',
      backups: [{ provider: 'oai', model: 'gpt-4o-mini' }],
    }),
    workflow('compat-only', { provider: 'compat', model: 'llama' }),
    workflow('test-mode', { provider: 'oai', model: 'fail-503', testMode: true }),
  ]);
});
afterAll(async () => {
  await closeUpstreamPools();
  await sim?.close();
});
beforeEach(() => sim.clearRequests());

const run = (wf: string, extra: Record<string, unknown> = {}) => {
  const p = prepared(runtime, chat(wf, extra));
  return { p, out: execute(p.plan, p.request, new AbortController().signal, NO_CHAIN) };
};

const offSchema = {
  provider: 'compat',
  model: 'llama',
  status: 'error',
  reason: {
    message: "the model output does not match the schema: / must have required property 'name'",
    status: 502,
    code: 'UPSTREAM_BAD_RESPONSE',
  },
  duration_ms: ms,
};

describe('execute', () => {
  it('an answer off its schema fails over; the structured value is the one that passed', async () => {
    const out = await run('compat-first', { structured_output_schema: PERSON }).out;
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(out.attempts).toEqual([
      offSchema,
      { provider: 'oai', model: 'gpt-4o-mini', status: 'success', duration_ms: ms },
    ]);
    expect(out.slot.slot).toBe('backup-1');
    if (out.result.kind !== 'chat') throw new Error('expected a chat result');
    expect(out.structured).toEqual(JSON.parse(out.result.content ?? ''));
    expect(out.structured).toEqual({ name: expect.any(String), age: expect.any(Number) });
  });

  it('no slot on schema: the chain fails with the check as the reason (a provider fault, no refusal)', async () => {
    const out = await run('compat-only', { structured_output_schema: PERSON }).out;
    expect(out.ok).toBe(false);
    if (out.ok) return;
    expect(out.attempts).toEqual([offSchema]);
    expect(out.error.code).toBe('UPSTREAM_BAD_RESPONSE');
    expect(out.refusal).toBeUndefined();
  });

  it('JSON mode without a schema: any JSON passes, and is the structured value', async () => {
    const out = await run('compat-only', {
      response_format: { type: 'json_object' },
      messages: [{ role: 'user', content: 'Answer in JSON: where is my order?' }],
    }).out;
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(out.attempts).toEqual([
      { provider: 'compat', model: 'llama', status: 'success', duration_ms: ms },
    ]);
    expect(out.structured).toEqual({
      reply: 'Simulated openai/llama reply: Answer in JSON: where is my order?',
    });
  });

  it('an answer that calls a tool is not checked against the schema', async () => {
    const out = await run('compat-only', { structured_output_schema: PERSON, tools: [WEATHER_TOOL] }).out;
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(out.attempts).toEqual([
      { provider: 'compat', model: 'llama', status: 'success', duration_ms: ms },
    ]);
    expect(out.result).toMatchObject({ kind: 'chat', tool_calls: [{ function: { name: 'get_weather' } }] });
    expect(out.structured).toBeUndefined();
  });

  it('test mode: the test-mode generator answers for the slot, no provider is called', async () => {
    const out = await run('test-mode').out;
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(out.attempts).toEqual([
      { provider: 'oai', model: 'fail-503', status: 'success', duration_ms: ms },
    ]);
    expect(out.result).toMatchObject({
      kind: 'chat',
      content: 'This is a test-mode answer from fail-503 to: "Where is my order?". No provider was called.',
    });
    expect(out.structured).toBeUndefined();
    expect(sim.requests()).toEqual([]);
  });
});

describe('structuredValue (an answer that passed its check before, e.g. a cached one)', () => {
  const answer = (content: string): CanonicalResult => ({
    kind: 'chat',
    id: 'chatcmpl-1',
    content,
    finish_reason: 'stop',
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    model: 'gpt-4o-mini',
  });
  const plan = (extra: Record<string, unknown>) => prepared(runtime, chat('compat-first', extra)).plan;

  it('the parsed value when the plan asks for structured output and the answer passes', () => {
    expect(
      structuredValue(plan({ structured_output_schema: PERSON }), answer('{"name":"Ada","age":36}')),
    ).toEqual({
      name: 'Ada',
      age: 36,
    });
  });

  it('undefined for an answer off the schema, or a plan that asks for none', () => {
    expect(
      structuredValue(plan({ structured_output_schema: PERSON }), answer('{"name":"Ada"}')),
    ).toBeUndefined();
    expect(structuredValue(plan({}), answer('{"name":"Ada","age":36}'))).toBeUndefined();
  });
});
