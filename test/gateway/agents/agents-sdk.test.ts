/**
 * The OpenAI Agents SDK (JS, `@openai/agents`) with its default settings (the Responses API) and one
 * tool, end to end: against the provider simulator (a real tool round trip through OpenAI-,
 * Anthropic- and Gemini-backed workflows) and against test mode. Tracing stays at its default
 * (on): its exports go to OpenAI's endpoint, unreachable here, and the runs do not depend on them.
 */
import { Agent, run, setDefaultOpenAIClient, tool } from '@openai/agents';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type RunningGateway, startGateway } from '../../harness/gateway.ts';
import { API_KEY, baseConfig, workflow } from '../../harness/manifests.ts';
import { type Simulator, startSimulator } from '../../simulator/index.ts';

let sim: Simulator;
let gw: RunningGateway;

beforeAll(async () => {
  sim = await startSimulator();
  gw = await startGateway([
    ...baseConfig(sim.url),
    workflow('agent-openai', { provider: 'oai', model: 'gpt-4o-mini' }),
    workflow('agent-claude', { provider: 'claude', model: 'claude-haiku-4-5' }),
    workflow('agent-gemini', { provider: 'gem', model: 'gemini-2.5-flash' }),
    workflow('agent-sandbox', { provider: 'oai', model: 'gpt-4o-mini', testMode: true }),
  ]);
  setDefaultOpenAIClient(new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: API_KEY, maxRetries: 0 }));
});
afterAll(async () => {
  await gw?.close();
  await sim?.close();
});

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

describe('OpenAI Agents SDK, default settings, one tool', () => {
  it.each(['agent-openai', 'agent-claude', 'agent-gemini'])(
    'against the simulator through %s: the tool runs once and the agent answers',
    async (model) => {
      sim.clearRequests();
      const calls: string[] = [];
      const result = await run(weatherAgent(model, calls), 'What is the weather in Lisbon?');
      expect(calls).toHaveLength(1);
      expect(typeof result.finalOutput).toBe('string');
      expect(String(result.finalOutput)).toContain('Simulated');
      // Two model calls: the tool call, then the answer after the tool result.
      expect(sim.requests()).toHaveLength(2);
    },
  );

  it('against test mode: one tool call, then a text answer that uses the result', async () => {
    const calls: string[] = [];
    const result = await run(weatherAgent('agent-sandbox', calls), 'What is the weather in Lisbon?');
    expect(calls).toHaveLength(1);
    expect(String(result.finalOutput)).toContain('18°C and sunny');
  });

  it('streamed, against test mode', async () => {
    const calls: string[] = [];
    const stream = await run(weatherAgent('agent-sandbox', calls), 'Weather in Porto?', { stream: true });
    for await (const _ of stream) {
      // drain
    }
    await stream.completed;
    expect(calls).toHaveLength(1);
    expect(String(stream.finalOutput)).toContain('sunny');
  });
});
