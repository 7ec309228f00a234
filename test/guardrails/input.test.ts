import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningRedis, startRedis } from '#devkit/redis';
import { postJson, waitState } from '../async/harness.ts';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import {
  ALL_VALUES,
  API_KEY,
  allLogs,
  config,
  DENIED,
  dumpRedis,
  expectNoneOf,
  PII,
  upstreamText,
} from './helpers.ts';

/**
 * Prompts on every surface, streamed and not, with PII in the last message, an earlier one, the
 * system prompt, a tool call's arguments and a tool result: the provider only ever receives the
 * redacted text, and after the run no raw value is anywhere in Redis (every key, every value) or
 * in the request logs (bodies on), though every store of the gateway was used (cache, session
 * memory, stored responses, an async job).
 */

let sim: Simulator;
let gw: RunningGateway;
let redis: RunningRedis;
const openai = () => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: API_KEY, maxRetries: 0 });
const anthropic = () => new Anthropic({ baseURL: gw.url, apiKey: API_KEY, maxRetries: 0 });

beforeAll(async () => {
  sim = await startSimulator();
  redis = await startRedis();
  gw = await startGateway(config(sim.url), { redisUrl: redis.url });
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await sim?.close();
  await redis?.stop();
});

/** The last upstream request: none of the raw values, the placeholders instead. */
function expectUpstreamRedacted(placeholders = ['[EMAIL]']): void {
  const last = sim.requests().at(-1);
  const text = upstreamText(last ? [last] : []);
  expectNoneOf(text, ALL_VALUES, 'the upstream request');
  for (const p of placeholders) expect(text).toContain(p);
}

const chatMessages = () =>
  [
    { role: 'system', content: `Escalate to ${PII.system}.` },
    { role: 'user', content: `Earlier I wrote from ${PII.earlier}.` },
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        {
          id: 'call_1',
          type: 'function',
          function: { name: 'lookup', arguments: JSON.stringify({ email: PII.toolArgs }) },
        },
      ],
    },
    { role: 'tool', tool_call_id: 'call_1', content: `Found ${PII.toolResult}, card ${PII.card}.` },
    { role: 'user', content: `Now write to ${PII.last} please.` },
  ] as const;
const lookupTool = {
  type: 'function' as const,
  function: { name: 'lookup', parameters: { type: 'object', properties: { email: { type: 'string' } } } },
};

describe('native surface', () => {
  for (const stream of [false, true])
    it(`every message, tool call and tool result is redacted before the provider (stream: ${stream})`, async () => {
      const res = await fetch(`${gw.url}/v1/ai`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ workflow: 'chat', stream, messages: chatMessages(), tools: [lookupTool] }),
      });
      expect(res.status).toBe(200);
      expect(res.headers.get('x-service-guardrails')).toBe('pii/email=redact,pii/cards=redact');
      await res.text();
      expectUpstreamRedacted(['[EMAIL]', '[CARD]']);
    });

  it('a deny-listed phrase anywhere refuses the request; the message names the rule, not the value', async () => {
    const before = sim.requests().length;
    const r = await postJson(`${gw.url}/v1/ai`, API_KEY, {
      workflow: 'chat',
      messages: [
        { role: 'user', content: `Tell me about ${DENIED}.` },
        { role: 'user', content: 'thanks' },
      ],
    });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: 'guardrail_blocked', rule: 'pii/codename', direction: 'input' });
    expect(r.body.message).toContain('pii/codename');
    expect(JSON.stringify(r.body)).not.toContain(DENIED);
    expect(sim.requests().length).toBe(before);
  });

  it('completions, embeddings and session memory are checked too', async () => {
    const done = await postJson(`${gw.url}/v1/completions`, API_KEY, {
      model: 'complete',
      prompt: `Mail ${PII.last}`,
    });
    expect(done.status).toBe(200);
    expectUpstreamRedacted();
    const emb = await postJson(`${gw.url}/v1/embeddings`, API_KEY, {
      model: 'embed',
      input: [`a ${PII.earlier}`, 'b'],
    });
    expect(emb.status).toBe(200);
    expectUpstreamRedacted();
    const first = await postJson(`${gw.url}/v1/ai`, API_KEY, {
      workflow: 'memo',
      format: 'wrapped',
      messages: [{ role: 'user', content: `I am ${PII.last}` }],
    });
    expect(first.status).toBe(200);
    const session = first.body.meta.session_id;
    const second = await postJson(`${gw.url}/v1/ai`, API_KEY, {
      workflow: 'memo',
      session_id: session,
      messages: [{ role: 'user', content: 'and again' }],
    });
    expect(second.status).toBe(200);
    expectUpstreamRedacted();
    // Refused by a feature after guardrails (an unknown session): logged as checked, too.
    const unknown = await postJson(`${gw.url}/v1/ai`, API_KEY, {
      workflow: 'memo',
      session_id: '00000000-0000-4000-8000-000000000000',
      messages: [{ role: 'user', content: `I am ${PII.earlier}` }],
    });
    expect(unknown.status).toBe(422);
  });

  it('an async job is checked at acceptance and waits in Redis redacted', async () => {
    const ack = await postJson(`${gw.url}/v1/ai/async`, API_KEY, {
      workflow: 'chat',
      messages: [{ role: 'user', content: `async ${PII.last}` }],
    });
    expect(ack.status).toBe(202);
    await waitState(gw.url, ack.body.channel_id, 'completed');
    expectUpstreamRedacted();
    const refused = await postJson(`${gw.url}/v1/ai/async`, API_KEY, {
      workflow: 'chat',
      messages: [{ role: 'user', content: DENIED }],
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('guardrail_blocked');
  });
});

describe('compatible chat (OpenAI SDK)', () => {
  it('not streamed and streamed', async () => {
    const messages = chatMessages() as unknown as OpenAI.ChatCompletionMessageParam[];
    // Not the native test's request (whose cached answer would come back without a provider call).
    const { response } = await openai()
      .chat.completions.create({ model: 'chat', messages, tools: [lookupTool], temperature: 0.2 })
      .withResponse();
    expect(response.headers.get('x-service-guardrails')).toContain('pii/email=redact');
    expectUpstreamRedacted(['[EMAIL]', '[CARD]']);
    const stream = await openai().chat.completions.create({
      model: 'chat',
      messages,
      tools: [lookupTool],
      stream: true,
      temperature: 0.1,
    });
    for await (const _ of stream);
    expectUpstreamRedacted(['[EMAIL]', '[CARD]']);
  });

  it('a block is the OpenAI error shape, 400', async () => {
    const err = await openai()
      .chat.completions.create({ model: 'chat', messages: [{ role: 'user', content: DENIED }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.BadRequestError);
    const e = err as InstanceType<typeof OpenAI.BadRequestError>;
    expect(e.status).toBe(400);
    expect(e.code).toBe('guardrail_blocked');
    expect(e.headers?.get('x-service-guardrails')).toBe('pii/codename=block');
  });
});

describe('Responses API (OpenAI SDK)', () => {
  const input = (): OpenAI.Responses.ResponseInput => [
    { role: 'user', content: `Earlier: ${PII.earlier}` },
    {
      type: 'function_call',
      call_id: 'call_9',
      name: 'lookup',
      arguments: JSON.stringify({ email: PII.toolArgs }),
    },
    { type: 'function_call_output', call_id: 'call_9', output: `found ${PII.toolResult}` },
    { role: 'user', content: `Now ${PII.last}, card ${PII.card}` },
  ];
  for (const stream of [false, true])
    it(`input items and instructions (stream: ${stream}); the stored response is redacted too`, async () => {
      const tools: OpenAI.Responses.Tool[] = [
        { type: 'function', name: 'lookup', parameters: lookupTool.function.parameters, strict: false },
      ];
      if (stream) {
        const s = await openai().responses.create({
          model: 'chat',
          instructions: `Write to ${PII.system}`,
          input: input(),
          tools,
          stream: true,
        });
        for await (const _ of s);
      } else {
        const r = await openai().responses.create({
          model: 'chat',
          instructions: `Write to ${PII.system}`,
          input: input(),
          tools,
        });
        const stored = await openai().responses.inputItems.list(r.id);
        expectNoneOf(JSON.stringify(stored.data), ALL_VALUES, 'stored input items');
      }
      expectUpstreamRedacted(['[EMAIL]', '[CARD]']);
    });

  it('a background response: its queued record and job hold the redacted text', async () => {
    const created = await openai().responses.create({
      model: 'chat',
      instructions: `Write to ${PII.system}`,
      input: input(),
      tools: [
        { type: 'function', name: 'lookup', parameters: lookupTool.function.parameters, strict: false },
      ],
      background: true,
    });
    let r = created;
    while (r.status === 'queued' || r.status === 'in_progress') r = await openai().responses.retrieve(r.id);
    expect(r.status).toBe('completed');
    expectNoneOf(JSON.stringify(r), ALL_VALUES, 'the background response');
    expectUpstreamRedacted(['[EMAIL]', '[CARD]']);
  });
});

describe('Messages API (Anthropic SDK)', () => {
  const params = (): Anthropic.MessageCreateParamsNonStreaming => ({
    model: 'claude',
    max_tokens: 100,
    system: `Escalate to ${PII.system}`,
    tools: [{ name: 'lookup', input_schema: { type: 'object', properties: { email: { type: 'string' } } } }],
    messages: [
      { role: 'user', content: `Earlier: ${PII.earlier}` },
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { email: PII.toolArgs } }],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: `found ${PII.toolResult}` },
          { type: 'text', text: `Now ${PII.last}, card ${PII.card}` },
        ],
      },
    ],
  });
  it('not streamed and streamed: the Claude-native body is not sent as written', async () => {
    const { response } = await anthropic().messages.create(params()).withResponse();
    expect(response.headers.get('x-service-guardrails')).toContain('pii/email=redact');
    expectUpstreamRedacted(['[EMAIL]', '[CARD]']);
    const s = anthropic().messages.stream(params());
    await s.finalMessage();
    expectUpstreamRedacted(['[EMAIL]', '[CARD]']);
  });

  it('a block is the Anthropic error shape, 400', async () => {
    const err = await anthropic()
      .messages.create({ model: 'claude', max_tokens: 10, messages: [{ role: 'user', content: DENIED }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.BadRequestError);
    expect((err as { error: { error: { code: string } } }).error.error.code).toBe('guardrail_blocked');
  });
});

describe('after the run', () => {
  it('no raw value in any Redis key or value, nor in the request logs; findings logged by rule and hash', async () => {
    await gw.gateway.state.flush();
    const dump = await dumpRedis(redis.url);
    console.log(`[guardrails] scanned ${dump.keys} Redis keys (${dump.text.length} bytes of values)`);
    expect(dump.keys).toBeGreaterThan(10);
    expect(dump.text).toContain('[EMAIL]');
    const leaking = dump.text.split('\n').filter((l) => ALL_VALUES.some((v) => l.includes(v)));
    expect(
      leaking.map((l) => {
        const at = Math.max(...ALL_VALUES.map((v) => l.indexOf(v)));
        return l.slice(Math.max(0, at - 1500), at + 100);
      }),
    ).toEqual([]);
    expectNoneOf(dump.text, ALL_VALUES, 'Redis');
    const entries = await allLogs(gw.url);
    expectNoneOf(JSON.stringify(entries), ALL_VALUES, 'request logs');
    const logged = entries.find((e) =>
      (e.details?.guardrails as { findings?: { rule: string }[] } | undefined)?.findings?.some(
        (f) => f.rule === 'pii/email',
      ),
    );
    expect(logged?.details?.guardrails).toMatchObject({
      findings: expect.arrayContaining([
        expect.objectContaining({
          rule: 'pii/email',
          label: 'EMAIL',
          mode: 'redact',
          direction: 'input',
          hash: expect.stringMatching(/^[0-9a-f]{16}$/),
        }),
      ]),
    });
    const blocked = entries.find((e) => e.error_code === 'guardrail_blocked');
    expect(blocked?.details?.guardrails).toMatchObject({
      findings: [expect.objectContaining({ rule: 'pii/codename', mode: 'block' })],
    });
  });

  it('counts findings per rule, mode and direction', async () => {
    const text = await (await fetch(`${gw.metricsUrl}/metrics`)).text();
    expect(text).toMatch(
      /switchyard_guardrail_findings_total\{rule="pii\/email",mode="redact",direction="input"\} [1-9]/,
    );
    expect(text).toMatch(
      /switchyard_guardrail_findings_total\{rule="pii\/codename",mode="block",direction="input"\} [1-9]/,
    );
  });
});
