import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningRedis, startRedis } from '#devkit/redis';
import { postJson } from '../async/harness.ts';
import { parseSse } from '../gateway/native/helpers.ts';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import { allLogs, config, dumpRedis, ECHO_KEY, expectNoneOf } from './helpers.ts';

/**
 * Answers with PII, on every surface, streamed and not: project `echo` only watches answers, and
 * the simulator's answer repeats the start of the prompt. Streams come in many small chunks, so
 * the value is split across them. Redacted before the client, the request log or Redis see it; a
 * block ends the stream with the surface's own error event.
 */

const EMAIL = 'echo.person@example.com';
const CARD = '5555 5555 5555 4444';
const TOOL_EMAIL = 'tool.output@example.com';
const RAW = [EMAIL, CARD, TOOL_EMAIL];

let sim: Simulator;
let gw: RunningGateway;
let redis: RunningRedis;
const openai = () => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: ECHO_KEY, maxRetries: 0 });
const anthropic = () => new Anthropic({ baseURL: gw.url, apiKey: ECHO_KEY, maxRetries: 0 });
const ask = `Mail ${EMAIL} ok`;

beforeAll(async () => {
  sim = await startSimulator({ streamChunks: 24 });
  redis = await startRedis();
  gw = await startGateway(config(sim.url), { redisUrl: redis.url });
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await sim?.close();
  await redis?.stop();
});

const expectRedacted = (text: string) => {
  expect(text).toContain('[EMAIL]');
  expectNoneOf(text, RAW, 'the answer');
};

describe('answers are redacted on every surface', () => {
  for (const stream of [false, true]) {
    it(`native (stream: ${stream})`, async () => {
      const res = await fetch(`${gw.url}/v1/ai`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ECHO_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ workflow: 'echo', stream, messages: [{ role: 'user', content: ask }] }),
      });
      expect(res.status).toBe(200);
      const body = await res.text();
      if (!stream) expect(res.headers.get('x-service-guardrails')).toBe('answers/email=redact');
      const text = stream
        ? parseSse(body)
            .filter((f) => f.data.startsWith('{'))
            .map(
              (f) =>
                (JSON.parse(f.data) as { choices?: { delta?: { content?: string } }[] }).choices?.[0]?.delta
                  ?.content ?? '',
            )
            .join('')
        : body;
      expectRedacted(text);
    });

    it(`compatible chat (stream: ${stream})`, async () => {
      const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: ask }];
      let text = '';
      if (stream) {
        const s = await openai().chat.completions.create({ model: 'echo', messages, stream: true });
        for await (const c of s) text += c.choices[0]?.delta.content ?? '';
      } else
        text =
          (await openai().chat.completions.create({ model: 'echo', messages })).choices[0]?.message.content ??
          '';
      expectRedacted(text);
    });

    it(`Responses (stream: ${stream})`, async () => {
      let text = '';
      if (stream) {
        const s = await openai().responses.create({ model: 'echo', input: ask, store: false, stream: true });
        for await (const ev of s) if (ev.type === 'response.output_text.delta') text += ev.delta;
      } else
        text = (await openai().responses.create({ model: 'echo', input: ask, store: false })).output_text;
      expectRedacted(text);
    });

    it(`Messages (stream: ${stream})`, async () => {
      const params = {
        model: 'echo-claude',
        max_tokens: 200,
        messages: [{ role: 'user' as const, content: ask }],
      };
      const msg = stream
        ? await anthropic().messages.stream(params).finalMessage()
        : await anthropic().messages.create(params);
      const text = msg.content.map((b) => (b.type === 'text' ? b.text : '')).join('');
      expectRedacted(text);
    });
  }

  it("a tool call's arguments in the answer, streamed and not", async () => {
    const tools: OpenAI.ChatCompletionTool[] = [
      {
        type: 'function',
        function: { name: 'notify', parameters: { type: 'object', properties: { to: { type: 'string' } } } },
      },
    ];
    const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'notify them' }];
    sim.addFault({
      match: { provider: 'openai' },
      toolCall: { name: 'notify', args: { to: TOOL_EMAIL } },
      times: 2,
    });
    const once = await openai().chat.completions.create({
      model: 'echo',
      messages,
      tools,
      tool_choice: 'required',
    });
    const args = once.choices[0]?.message.tool_calls?.[0];
    expect(args?.type === 'function' ? JSON.parse(args.function.arguments) : undefined).toEqual({
      to: '[EMAIL]',
    });
    const s = await openai().chat.completions.create({
      model: 'echo',
      messages,
      tools,
      tool_choice: 'required',
      stream: true,
    });
    let streamed = '';
    for await (const c of s) streamed += c.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? '';
    expect(JSON.parse(streamed)).toEqual({ to: '[EMAIL]' });
  });
});

describe('a block rule on answers', () => {
  const cardAsk = `Card ${CARD} ok`;

  it('not streamed: the surface error, 400, naming the rule and the direction', async () => {
    const r = await postJson(`${gw.url}/v1/ai`, ECHO_KEY, {
      workflow: 'echo',
      messages: [{ role: 'user', content: cardAsk }],
    });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ error: 'guardrail_blocked', rule: 'answers/cards', direction: 'output' });
    const err = await openai()
      .chat.completions.create({ model: 'echo', messages: [{ role: 'user', content: cardAsk }] })
      .catch((e: unknown) => e);
    expect((err as { code?: string }).code).toBe('guardrail_blocked');
  });

  it('streamed: the stream ends with the surface error event; the card never went out', async () => {
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ECHO_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'echo', stream: true, messages: [{ role: 'user', content: cardAsk }] }),
    });
    const body = await res.text();
    expectNoneOf(body, [CARD, CARD.replaceAll(' ', '')], 'the stream');
    const frames = parseSse(body).filter((f) => f.data.startsWith('{'));
    const last = JSON.parse(frames.at(-1)?.data ?? '{}') as { error?: { code?: string } };
    expect(last.error?.code).toBe('guardrail_blocked');
    const s = anthropic().messages.stream({
      model: 'echo-claude',
      max_tokens: 100,
      messages: [{ role: 'user', content: cardAsk }],
    });
    const failed = await s.finalMessage().catch((e: unknown) => e);
    expect(String(failed)).toContain('guardrail_blocked');
  });
});

describe('after the run', () => {
  it('no raw answer value in Redis or the request logs', async () => {
    await gw.gateway.state.flush();
    const dump = await dumpRedis(redis.url);
    console.log(`[guardrails] scanned ${dump.keys} Redis keys (${dump.text.length} bytes of values)`);
    expectNoneOf(dump.text, [TOOL_EMAIL, CARD], 'Redis');
    // The prompt's own copy of EMAIL is the client's (this project does not check prompts, nor keep bodies).
    expectNoneOf(JSON.stringify(await allLogs(gw.url, ECHO_KEY)), RAW, 'request logs');
  });
});
