/**
 * The SDK's higher-level helpers, which hold the wire format to stricter account than plain calls:
 * `parse` with zod response formats and zod tools, the `stream()` accumulator (tool-call deltas
 * included), `runTools` (the SDK drives the tool round trip itself), and client aborts.
 */
import OpenAI from 'openai';
import { zodFunction, zodResponseFormat } from 'openai/helpers/zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type CompatEnv, PROJECT_ID, startCompatEnv } from './helpers.ts';

let env: CompatEnv;
beforeAll(async () => {
  env = await startCompatEnv();
});
afterAll(async () => {
  await env?.close();
});

const Person = z.object({
  name: z.string(),
  age: z.number().int(),
  email: z.string().nullable(),
  roles: z.array(z.enum(['admin', 'member'])),
});

const WeatherArgs = z.object({ city: z.string(), unit: z.enum(['c', 'f']) });

describe.each(['/v1', '/api/v1'] as const)('SDK helpers under %s', (prefix) => {
  const sdk = () => env.client({ prefix });

  it('chat.completions.parse with zodResponseFormat gives a parsed object', async () => {
    const c = await sdk().chat.completions.parse({
      model: 'chat',
      messages: [{ role: 'user', content: 'Make up a person.' }],
      response_format: zodResponseFormat(Person, 'person'),
    });
    const parsed = c.choices[0]!.message.parsed;
    expect(parsed).not.toBeNull();
    expect(Person.safeParse(parsed).success).toBe(true);
    // What the provider was asked for: a strict json_schema named by the SDK.
    const sent = env.sim.requests().at(-1)!.body as { response_format?: { type: string } };
    expect(sent.response_format?.type).toBe('json_schema');
  });

  it('chat.completions.parse with a zod tool gives parsed_arguments', async () => {
    const c = await sdk().chat.completions.parse({
      model: 'chat',
      messages: [{ role: 'user', content: 'Weather in Rome?' }],
      tools: [zodFunction({ name: 'get_weather', parameters: WeatherArgs })],
      tool_choice: 'required',
    });
    const call = c.choices[0]!.message.tool_calls?.[0];
    expect(call?.type).toBe('function');
    if (call?.type !== 'function') throw new Error('expected a function call');
    expect(call.function.name).toBe('get_weather');
    expect(WeatherArgs.safeParse(call.function.parsed_arguments).success).toBe(true);
  });

  it('chat.completions.stream accumulates text into finalChatCompletion', async () => {
    const stream = sdk().chat.completions.stream({
      model: 'claude-chat',
      messages: [{ role: 'user', content: 'accumulate this' }],
      stream_options: { include_usage: true },
    });
    let deltas = '';
    stream.on('content', (delta) => {
      deltas += delta;
    });
    const final = await stream.finalChatCompletion();
    expect(final.model).toBe('claude-chat');
    expect(final.choices[0]!.message.content).toBe(deltas);
    expect(deltas).toContain('Simulated anthropic/claude-haiku-4-5 reply: accumulate this');
    expect(final.choices[0]!.finish_reason).toBe('stop');
    expect(final.usage?.total_tokens).toBeGreaterThan(0);
  });

  it.each(['chat', 'claude-chat'])(
    'chat.completions.stream accumulates tool-call deltas (%s)',
    async (model) => {
      const stream = sdk().chat.completions.stream({
        model,
        messages: [{ role: 'user', content: 'Weather in Lima?' }],
        tools: [zodFunction({ name: 'get_weather', parameters: WeatherArgs })],
        // 'required', not a named tool: OpenAI itself reports finish_reason "stop" for a forced named
        // tool (the simulator keeps that quirk, and the gateway passes the provider's reason through).
        tool_choice: 'required',
      });
      const final = await stream.finalChatCompletion();
      const choice = final.choices[0]!;
      expect(choice.finish_reason).toBe('tool_calls');
      const call = choice.message.tool_calls?.[0];
      if (call?.type !== 'function') throw new Error('expected a function call');
      expect(call.id.length).toBeGreaterThan(0);
      expect(call.function.name).toBe('get_weather');
      expect(WeatherArgs.safeParse(JSON.parse(call.function.arguments)).success).toBe(true);
      expect(WeatherArgs.safeParse(call.function.parsed_arguments).success).toBe(true);
    },
  );

  it('runTools: the SDK calls the tool and sends the result back in a second turn', async () => {
    const seen: unknown[] = [];
    const runner = sdk().chat.completions.runTools({
      model: 'chat',
      messages: [{ role: 'user', content: 'What is the weather in Kyoto?' }],
      tools: [
        zodFunction({
          name: 'get_weather',
          parameters: WeatherArgs,
          function: (args) => {
            seen.push(args);
            return { temperature: 18, unit: args.unit };
          },
        }),
      ],
    });
    const content = await runner.finalContent();
    expect(seen).toHaveLength(1);
    expect(WeatherArgs.safeParse(seen[0]).success).toBe(true);
    expect(typeof content).toBe('string');
    expect(content!.length).toBeGreaterThan(0);
    const roles = runner.messages.map((m) => m.role);
    expect(roles).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });
});

async function metricValue(name: string, labels: Record<string, string>): Promise<number | undefined> {
  const text = await (await fetch(`${env.gw.metricsUrl}/metrics`)).text();
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
      return Number(line.split(' ').at(-1));
  }
  return undefined;
}

async function eventually(check: () => Promise<boolean>, ms = 2000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not reached in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('a client that goes away mid-stream', () => {
  it('aborting the SDK stream releases the request: in-flight back to 0, outcome aborted', async () => {
    env.sim.addFault({ match: { provider: 'openai' }, streamChunks: 100, chunkIntervalMs: 50, times: 1 });
    const controller = new AbortController();
    const stream = await env
      .client()
      .chat.completions.create(
        { model: 'chat', messages: [{ role: 'user', content: 'a long story' }], stream: true },
        { signal: controller.signal },
      );
    let got = 0;
    // Breaking out of the loop makes the SDK abort the HTTP request (this SDK ends the iterator
    // quietly on a user abort, so there is no error to catch).
    for await (const _ of stream) {
      got++;
      if (got === 3) break;
    }
    expect(got).toBe(3);
    expect(controller.signal.aborted).toBe(false);
    await eventually(
      async () => (await metricValue('switchyard_requests_in_flight', { surface: 'compat' })) === 0,
    );
    await eventually(
      async () =>
        (await metricValue('switchyard_requests_total', {
          surface: 'compat',
          project: PROJECT_ID,
          workflow: 'chat',
          outcome: 'aborted',
        })) === 1,
    );
  });

  it('a client that times out on a slow upstream is released and counted as aborted', async () => {
    const impatient = new OpenAI({
      baseURL: `${env.gw.url}/v1`,
      apiKey: env.client().apiKey,
      maxRetries: 0,
      timeout: 100,
    });
    await expect(
      impatient.chat.completions.create({ model: 'slow-chat', messages: [{ role: 'user', content: 'x' }] }),
    ).rejects.toBeInstanceOf(OpenAI.APIConnectionTimeoutError);
    await eventually(
      async () => (await metricValue('switchyard_requests_in_flight', { surface: 'compat' })) === 0,
    );
    await eventually(
      async () =>
        (await metricValue('switchyard_requests_total', {
          surface: 'compat',
          workflow: 'slow-chat',
          outcome: 'aborted',
        })) === 1,
    );
  });

  it('a stream cut by the provider is counted as stream_error', async () => {
    const stream = await env.client().chat.completions.create({
      model: 'cut-stream',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
    });
    await expect(
      (async () => {
        for await (const _ of stream) {
          // drain
        }
      })(),
    ).rejects.toBeInstanceOf(OpenAI.APIError);
    await eventually(
      async () =>
        (await metricValue('switchyard_requests_total', {
          surface: 'compat',
          workflow: 'cut-stream',
          outcome: 'stream_error',
        })) === 1,
    );
  });
});
