/**
 * The OpenAI Agents SDK (JS, `@openai/agents`) with its default settings, one tool and an
 * `OpenAIConversationsSession`: the session's history lives in the gateway's Conversations API, and
 * a second run on a second gateway process (same Redis) continues it. Tracing stays at its default
 * (on): its exports go to OpenAI's endpoint, unreachable here, and the runs do not depend on them.
 */
import { Agent, OpenAIConversationsSession, OpenAIProvider, Runner, tool } from '@openai/agents';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startRedis } from '#devkit/redis';
import { type RunningGateway, startGateway } from '../../harness/gateway.ts';
import { API_KEY, baseConfig, workflow } from '../../harness/manifests.ts';
import { type Simulator, startSimulator } from '../../simulator/index.ts';

let sim: Simulator;
let redis: Awaited<ReturnType<typeof startRedis>>;
let a: RunningGateway;
let b: RunningGateway;

beforeAll(async () => {
  sim = await startSimulator();
  redis = await startRedis();
  const manifests = [
    ...baseConfig(sim.url),
    workflow('agent-openai', { provider: 'oai', model: 'gpt-4o-mini' }),
    workflow('agent-claude', { provider: 'claude', model: 'claude-haiku-4-5' }),
  ];
  a = await startGateway(manifests, { redisUrl: redis.url });
  b = await startGateway(manifests, { redisUrl: redis.url });
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await redis?.stop();
  await sim?.close();
});

const client = (gw: RunningGateway) =>
  new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: API_KEY, maxRetries: 0, timeout: 15_000 });

/** A runner whose models talk to `gw` (otherwise the SDK's defaults: the Responses API). */
const runnerOn = (gw: RunningGateway) =>
  new Runner({ modelProvider: new OpenAIProvider({ openAIClient: client(gw) }) });

function weatherAgent(model: string, calls: string[]) {
  const getWeather = tool({
    name: 'get_weather',
    description: 'The weather in a city.',
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      calls.push(city);
      return `It is 18°C and sunny in ${city}.`;
    },
  });
  return new Agent({
    name: 'Weather',
    instructions: 'Use the tool, then answer.',
    model,
    tools: [getWeather],
  });
}

describe('OpenAI Agents SDK with OpenAIConversationsSession', () => {
  it('keeps the history in a conversation, continued on another process', async () => {
    const calls: string[] = [];
    const first = new OpenAIConversationsSession({ client: client(a) });
    const r1 = await runnerOn(a).run(weatherAgent('agent-openai', calls), 'What is the weather in Lisbon?', {
      session: first,
    });
    expect(calls).toHaveLength(1);
    expect(String(r1.finalOutput)).toContain('Simulated');
    const id = await first.getSessionId();
    expect(id).toMatch(/^conv_/);
    const stored = await client(b).conversations.items.list(id, { order: 'asc' });
    expect(stored.data.map((i) => i.type)).toEqual([
      'message',
      'function_call',
      'function_call_output',
      'message',
    ]);

    // The same conversation, from the other process and another provider.
    const second = new OpenAIConversationsSession({ client: client(b), conversationId: id });
    sim.clearRequests();
    const r2 = await runnerOn(b).run(weatherAgent('agent-claude', calls), 'And in Porto?', {
      session: second,
    });
    expect(String(r2.finalOutput)).toContain('Simulated');
    expect(calls).toHaveLength(2);
    const sent = sim.requests()[0]!.body as { messages: { role: string }[] };
    // The first run's four items came back as history ahead of the new question.
    expect(sent.messages.length).toBeGreaterThanOrEqual(5);
    const items = await second.getItems();
    expect(items.length).toBeGreaterThan(4);
    console.log(
      `agents session: ${calls.length} tool calls, ${items.length} items in ${id}, continued on the other process`,
    );
    await second.clearSession();
    await expect(client(a).conversations.retrieve(id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});
