/**
 * Prompt-cache tokens: what a provider reports as read from or written to its prompt cache is priced
 * at the model's cache prices (a read is a tenth of the input price on Claude and OpenAI's newer
 * models, a write a quarter more), not as fresh input, and every surface reports the split in its
 * own shape. The simulator's Claude caches `cache_control` prefixes as Claude does; OpenAI, Gemini
 * and Bedrock report the cached tokens a fault rule asks for. Request-log costs are read back from
 * a gateway on real Redis; clients are the official SDKs.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ceilingUsage, costMicros } from '#gateway/domain/cost';
import { normaliseAnthropicUsage } from '#gateway/providers/anthropic/response';
import { normaliseOpenAIUsage } from '#gateway/providers/openai/response';
import type { RunningGateway } from '../harness/gateway.ts';
import { API_KEY, bedrockProvider, provider, workflow } from '../harness/manifests.ts';
import type { Simulator } from '../simulator/index.ts';
import {
  CACHE_PRICING,
  logged,
  micros,
  PRICES,
  type Stack,
  sendMessages,
  startStack,
} from './cache-pricing.ts';

const PLAIN_PRICING = { inputUsdPerMTok: String(PRICES.input), outputUsdPerMTok: String(PRICES.output) };

const CLAUDE = 'claude-haiku-4-5';
const BEDROCK_CLAUDE = 'anthropic.claude-3-5-haiku-20241022-v1:0';
/** Long enough (~60 tokens in the simulator's count) that a fault's cached tokens fit in the prompt. */
const PROMPT = 'Summarise the quarterly report for the board, in three short sentences. '.repeat(3);
const CACHED = 24;
const WRITTEN = 16;

const models = (names: string[], pricing: Record<string, string>) => ({
  models: names.map((name) => ({ name, requestTypes: ['chat', 'completion'], pricing })),
});

let stack: Stack;
let sim: Simulator;
let gw: RunningGateway;

beforeAll(async () => {
  stack = await startStack((sim) => [
    ...provider('claude', 'anthropic', sim.url, [], models([CLAUDE], CACHE_PRICING)),
    ...provider('oai', 'openai', sim.url, [], models(['gpt-4o-mini'], CACHE_PRICING)),
    ...provider('oai-plain', 'openai', sim.url, [], models(['gpt-4.1-mini'], PLAIN_PRICING)),
    ...provider('gem', 'gemini', sim.url, [], models(['gemini-2.5-flash'], CACHE_PRICING)),
    ...bedrockProvider('bed', sim.url, [], models([BEDROCK_CLAUDE], CACHE_PRICING)),
    workflow('claude', { provider: 'claude', model: CLAUDE }),
    workflow('gpt', { provider: 'oai', model: 'gpt-4o-mini' }),
    workflow('gpt-plain', { provider: 'oai-plain', model: 'gpt-4.1-mini' }),
    workflow('gem', { provider: 'gem', model: 'gemini-2.5-flash' }),
    workflow('bedrock', { provider: 'bed', model: BEDROCK_CLAUDE }),
  ]);
  ({ sim, gw } = stack);
  sim.addFault({ match: { provider: 'openai' }, cachedTokens: CACHED });
  sim.addFault({ match: { provider: 'gemini' }, cachedTokens: CACHED });
  sim.addFault({ match: { provider: 'bedrock' }, cachedTokens: CACHED, cacheWriteTokens: WRITTEN });
});

afterAll(() => stack?.close());

const openai = () => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: API_KEY, maxRetries: 0, timeout: 15_000 });
const anthropic = () => new Anthropic({ baseURL: gw.url, apiKey: API_KEY, maxRetries: 0, timeout: 15_000 });

/** µUSD at PRICES: fresh input, cache reads, five-minute and one-hour writes each at their own price. */
const priced = (prompt: number, completion: number, read = 0, write = 0, hour = 0): number =>
  (prompt - read - write) * PRICES.input +
  read * PRICES.cachedInput +
  (write - hour) * PRICES.cacheWrite +
  hour * PRICES.cacheWrite1h +
  completion * PRICES.output;

describe("Claude's cache writes and reads (Messages, passed through)", () => {
  it.each([false, true])(
    'are priced apart, and the answer carries them as Claude sent them (stream: %s)',
    async (streamed) => {
      const params: Anthropic.MessageCreateParamsNonStreaming = {
        model: 'claude',
        max_tokens: 200,
        system: [{ type: 'text', text: `${PROMPT} ${streamed}`, cache_control: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: 'What changed since last quarter?' }],
      };
      const send = () => sendMessages(anthropic(), params, streamed);
      const first = await send();
      const second = await send();
      const write = first.usage.cache_creation_input_tokens ?? 0;
      const read = second.usage.cache_read_input_tokens ?? 0;
      expect(write).toBeGreaterThan(0);
      expect(read).toBe(write);

      const prompt = (u: Anthropic.Usage) =>
        u.input_tokens + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0);
      const a = await logged(gw, first.id);
      const b = await logged(gw, second.id);
      expect(a.usage?.prompt_tokens).toBe(prompt(first.usage));
      expect(micros(a)).toBe(priced(prompt(first.usage), first.usage.output_tokens, 0, write));
      expect(micros(b)).toBe(priced(prompt(second.usage), second.usage.output_tokens, read, 0));
      // The same prompt read from the cache costs a fraction of writing it.
      expect(micros(b)).toBeLessThan(micros(a));
      console.log(
        `claude (stream: ${streamed}): write ${write} tokens → ${micros(a)} µUSD, read ${read} → ${micros(b)} µUSD`,
      );
    },
  );
});

describe("Claude's one-hour cache writes", () => {
  it.each([false, true])(
    'are priced at the one-hour price, next to five-minute ones in one prompt (stream: %s)',
    async (streamed) => {
      const params: Anthropic.MessageCreateParamsNonStreaming = {
        model: 'claude',
        max_tokens: 200,
        // One-hour entries come first, as Claude requires.
        system: [
          {
            type: 'text',
            text: `${PROMPT} hour ${streamed}`,
            cache_control: { type: 'ephemeral', ttl: '1h' },
          },
          { type: 'text', text: `${PROMPT} minutes ${streamed}`, cache_control: { type: 'ephemeral' } },
        ],
        messages: [{ role: 'user', content: 'And the outlook?' }],
      };
      const { usage, id } = await sendMessages(anthropic(), params, streamed);
      const hour = usage.cache_creation?.ephemeral_1h_input_tokens ?? 0;
      const minutes = usage.cache_creation?.ephemeral_5m_input_tokens ?? 0;
      expect(hour).toBeGreaterThan(0);
      expect(minutes).toBeGreaterThan(0);
      expect(hour + minutes).toBe(usage.cache_creation_input_tokens);
      const prompt = usage.input_tokens + (usage.cache_creation_input_tokens ?? 0);
      const entry = await logged(gw, id);
      expect(micros(entry)).toBe(priced(prompt, usage.output_tokens, 0, hour + minutes, hour));
    },
  );
});

describe('cached prompt tokens on the other providers', () => {
  it.each([false, true])(
    'OpenAI: compat reports prompt_tokens_details.cached_tokens, priced at the cached price (stream: %s)',
    async (streamed) => {
      const ask = { model: 'gpt', messages: [{ role: 'user' as const, content: PROMPT }] };
      let usage: OpenAI.CompletionUsage | undefined;
      let id: string | null;
      if (streamed) {
        const { data: stream, response } = await openai()
          .chat.completions.create({ ...ask, stream: true, stream_options: { include_usage: true } })
          .withResponse();
        id = response.headers.get('x-service-request-log-id');
        for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
      } else {
        const { data, response } = await openai().chat.completions.create(ask).withResponse();
        usage = data.usage;
        id = response.headers.get('x-service-request-log-id');
      }
      expect(usage?.prompt_tokens_details).toEqual({ cached_tokens: CACHED });
      const entry = await logged(gw, id);
      expect(micros(entry)).toBe(priced(usage!.prompt_tokens, usage!.completion_tokens, CACHED));
    },
  );

  it('Gemini: cachedContentTokenCount is the cached part of the prompt', async () => {
    const { data, response } = await openai()
      .chat.completions.create({ model: 'gem', messages: [{ role: 'user', content: PROMPT }] })
      .withResponse();
    expect(data.usage?.prompt_tokens_details).toEqual({ cached_tokens: CACHED });
    const entry = await logged(gw, response.headers.get('x-service-request-log-id'));
    expect(micros(entry)).toBe(priced(data.usage!.prompt_tokens, data.usage!.completion_tokens, CACHED));
  });

  it('Bedrock: cache reads and writes, reported apart from inputTokens, are priced apart', async () => {
    const { data, response } = await openai()
      .chat.completions.create({ model: 'bedrock', messages: [{ role: 'user', content: PROMPT }] })
      .withResponse();
    const usage = data.usage!;
    const upstream = sim.requests().filter((r) => r.provider === 'bedrock');
    expect(upstream.length).toBeGreaterThan(0);
    // prompt_tokens counts every input token; only the reads have a place in OpenAI's shape.
    expect(usage.prompt_tokens_details).toEqual({ cached_tokens: CACHED });
    expect(usage.prompt_tokens).toBeGreaterThan(CACHED + WRITTEN);
    const entry = await logged(gw, response.headers.get('x-service-request-log-id'));
    expect(entry.usage?.prompt_tokens).toBe(usage.prompt_tokens);
    expect(micros(entry)).toBe(priced(usage.prompt_tokens, usage.completion_tokens, CACHED, WRITTEN));
  });

  it('a model without cache prices charges cached tokens as input', async () => {
    const { data, response } = await openai()
      .chat.completions.create({ model: 'gpt-plain', messages: [{ role: 'user', content: PROMPT }] })
      .withResponse();
    expect(data.usage?.prompt_tokens_details).toEqual({ cached_tokens: CACHED });
    const entry = await logged(gw, response.headers.get('x-service-request-log-id'));
    expect(micros(entry)).toBe(priced(data.usage!.prompt_tokens, data.usage!.completion_tokens));
  });
});

describe('translated surfaces report the cache read in their own shape', () => {
  it.each([false, true])(
    'Messages on an OpenAI slot: cache_read_input_tokens, input_tokens without them (stream: %s)',
    async (streamed) => {
      const params = {
        model: 'gpt',
        max_tokens: 200,
        messages: [{ role: 'user' as const, content: PROMPT }],
      };
      const m = streamed
        ? await anthropic().messages.stream(params).finalMessage()
        : await anthropic().messages.create(params);
      expect(m.usage.cache_read_input_tokens).toBe(CACHED);
      expect(m.usage.cache_creation_input_tokens).toBe(0);
      const upstream = sim
        .requests()
        .filter((r) => r.provider === 'openai')
        .at(-1)!;
      expect((upstream.body as { model: string }).model).toBe('gpt-4o-mini');
      expect(m.usage.input_tokens).toBeGreaterThan(0);
    },
  );

  it('Messages: input_tokens plus the cache read is the prompt the request log counts', async () => {
    const { data, response } = await anthropic()
      .messages.create({ model: 'gpt', max_tokens: 200, messages: [{ role: 'user', content: PROMPT }] })
      .withResponse();
    const entry = await logged(gw, response.headers.get('x-service-request-log-id'));
    expect(data.usage.input_tokens + CACHED).toBe(entry.usage?.prompt_tokens);
  });

  it.each([false, true])(
    'Responses on an OpenAI slot: input_tokens_details.cached_tokens (stream: %s)',
    async (streamed) => {
      const params = { model: 'gpt', input: PROMPT };
      const r = streamed
        ? await openai().responses.stream(params).finalResponse()
        : await openai().responses.create(params);
      expect(r.usage?.input_tokens_details).toEqual({ cached_tokens: CACHED, cache_write_tokens: 0 });
      expect(r.usage?.input_tokens).toBeGreaterThan(CACHED);
    },
  );
});

describe('the price functions', () => {
  it('a reservation prices the whole prompt at the dearest input price: a cache write may cost more', () => {
    const pricing = CACHE_PRICING;
    // The one-hour write is the dearest here.
    expect(costMicros({ usage: ceilingUsage(100, 10, pricing) }, pricing)).toBe(100 * 30 + 10 * 40);
    const fiveMinutes = { ...PLAIN_PRICING, cacheWriteUsdPerMTok: '20' };
    expect(costMicros({ usage: ceilingUsage(100, 10, fiveMinutes) }, fiveMinutes)).toBe(100 * 20 + 10 * 40);
    // A model whose cached price is (oddly) the dearest: the reservation covers it too.
    const hourly = { ...PLAIN_PRICING, cacheWriteUsdPerMTok: '12.5', cacheWrite1hUsdPerMTok: '20' };
    expect(costMicros({ usage: ceilingUsage(100, 10, hourly) }, hourly)).toBe(100 * 20 + 10 * 40);
    const odd = { ...PLAIN_PRICING, cachedInputUsdPerMTok: '15' };
    expect(costMicros({ usage: ceilingUsage(100, 10, odd) }, odd)).toBe(100 * 15 + 10 * 40);
    expect(costMicros({ usage: ceilingUsage(100, 10, PLAIN_PRICING) }, PLAIN_PRICING)).toBe(
      100 * 10 + 10 * 40,
    );
  });

  it('a cache split that does not fit in the prompt is dropped, never priced', () => {
    const u = normaliseOpenAIUsage({
      prompt_tokens: 10,
      completion_tokens: 1,
      total_tokens: 11,
      prompt_tokens_details: { cached_tokens: 50 },
    });
    expect(u).toEqual({ prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 });
    const hourOverflow = normaliseAnthropicUsage({
      input_tokens: 5,
      cache_creation_input_tokens: 10,
      cache_creation: { ephemeral_1h_input_tokens: 11 },
      output_tokens: 1,
    });
    expect(hourOverflow.cache_write_tokens).toBe(10);
    expect(hourOverflow.cache_write_1h_tokens).toBeUndefined();
    const neg = normaliseOpenAIUsage({
      prompt_tokens: 10,
      completion_tokens: 1,
      prompt_tokens_details: { cached_tokens: -3 },
    });
    expect(neg.cache_read_tokens).toBeUndefined();
  });
});
