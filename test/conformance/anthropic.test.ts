/**
 * POST /v1/messages for every provider type (anthropic, openai, gemini), text and tool calls, held to
 * the official `@anthropic-ai/sdk`: its response parsing (`messages.create`), its stream accumulator
 * (`messages.stream(...).finalMessage()`), its error classes, and every raw answer and stream event
 * compared field by field with exemplars typed by the SDK (anthropic-shapes.ts, which tsc checks).
 * The counts are printed.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSse } from '../gateway/native/helpers.ts';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { API_KEY, baseConfig, workflow } from '../harness/manifests.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import { compareShape, ERROR, MESSAGE, type ShapeReport, STREAM_EVENTS } from './anthropic-shapes.ts';

const PROVIDERS = [
  { name: 'claude', provider: 'claude', model: 'claude-haiku-4-5' },
  { name: 'gpt', provider: 'oai', model: 'gpt-4o-mini' },
  { name: 'gem', provider: 'gem', model: 'gemini-2.5-flash' },
] as const;

const WEATHER: Anthropic.Tool = {
  name: 'get_weather',
  description: 'Weather for a city.',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};

let sim: Simulator;
let gw: RunningGateway;
const tally = { objects: 0, events: 0, failures: 0 };
const absentNullable = new Set<string>();
const extras = new Set<string>();

beforeAll(async () => {
  sim = await startSimulator();
  gw = await startGateway([
    ...baseConfig(sim.url),
    ...PROVIDERS.map((p) => workflow(p.name, { provider: p.provider, model: p.model })),
    workflow('cut', { provider: 'oai', model: 'cut-2' }),
    workflow('down', { provider: 'oai', model: 'fail-503' }),
  ]);
});
afterAll(async () => {
  console.log(
    `anthropic-sdk conformance: ${tally.objects} objects, ${tally.events} events compared, ` +
      `${tally.failures} failures; nullable fields left out: ${[...absentNullable].sort().join(', ') || 'none'}; ` +
      `fields beyond the SDK's types: ${[...extras].sort().join(', ') || 'none'}`,
  );
  await gw?.close();
  await sim?.close();
});

const client = () => new Anthropic({ baseURL: gw.url, apiKey: API_KEY, maxRetries: 0, timeout: 15_000 });

function shape(actual: unknown, exemplar: unknown, where: string, kind: 'objects' | 'events'): string[] {
  tally[kind]++;
  const report: ShapeReport = compareShape(actual, exemplar);
  for (const p of report.absentNullable) absentNullable.add(`${where.split(' ')[0]}${p}`);
  for (const p of report.extras) extras.add(`${where.split(' ')[0]}${p}`);
  if (report.mismatches.length > 0) tally.failures++;
  return report.mismatches.map((m) => `${where}: ${m}`);
}

function shapeEvent(event: { type?: unknown }, where: string): string[] {
  const exemplar = STREAM_EVENTS[String(event.type)];
  if (exemplar === undefined) {
    tally.events++;
    tally.failures++;
    return [`${where}: event type ${String(event.type)} has no SDK type`];
  }
  return shape(event, exemplar, String(event.type), 'events');
}

async function raw(body: Record<string, unknown>): Promise<Response> {
  return fetch(`${gw.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': API_KEY, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify(body),
  });
}

const ask = (model: string, extra: { tools?: Anthropic.Tool[] } = {}) => ({
  model,
  max_tokens: 256,
  messages: [{ role: 'user' as const, content: 'What is the weather in Paris?' }],
  ...extra,
});

describe.each(PROVIDERS)('Messages on a $provider slot', ({ name }) => {
  it.each([
    ['text', {}],
    ['a tool call', { tools: [WEATHER] }],
  ])(
    'with %s: raw answer and events match the SDK types; the SDK parses and accumulates them',
    async (label, extra) => {
      const failures: string[] = [];
      const params = ask(name, extra);

      const whole = await raw(params);
      expect(whole.status).toBe(200);
      failures.push(...shape(await whole.json(), MESSAGE, 'message', 'objects'));
      const streamed = await raw({ ...params, stream: true });
      expect(streamed.status).toBe(200);
      const events = parseSse(await streamed.text()).map((f) => JSON.parse(f.data) as { type: string });
      for (const event of events) failures.push(...shapeEvent(event, 'stream'));
      expect(events.at(-1)?.type).toBe('message_stop');

      const parsed = await client().messages.create(params);
      const stream = client().messages.stream(params);
      const seen: string[] = [];
      stream.on('streamEvent', (event) => seen.push(event.type));
      const accumulated = await stream.finalMessage();
      const expected = label === 'text' ? 'text' : 'tool_use';
      for (const msg of [parsed, accumulated]) {
        expect(msg).toMatchObject({ type: 'message', role: 'assistant', model: name });
        expect(msg.content.map((b) => b.type)).toEqual([expected]);
        expect(msg.stop_reason).toBe(label === 'text' ? 'end_turn' : 'tool_use');
        expect(msg.usage.output_tokens).toBeGreaterThan(0);
      }
      const block = accumulated.content[0];
      if (block?.type === 'tool_use')
        expect(block.input).toEqual((parsed.content[0] as Anthropic.ToolUseBlock).input);
      else expect(block?.type === 'text' && block.text.length).toBeGreaterThan(0);
      expect(seen[0]).toBe('message_start');
      expect(seen.at(-1)).toBe('message_stop');
      expect(failures).toEqual([]);
    },
  );
});

describe('Messages errors', () => {
  it('error bodies and a stream cut after it started, as the SDK types and raises them', async () => {
    const failures: string[] = [];
    for (const body of [{}, ask('nope'), ask('down'), ask('cut')]) {
      const res = await raw(body);
      expect(res.status).toBeGreaterThanOrEqual(400);
      failures.push(...shape(await res.json(), ERROR, `error ${res.status}`, 'objects'));
    }
    const cut = await raw({ ...ask('cut', { tools: [WEATHER] }), stream: true });
    const events = parseSse(await cut.text()).map((f) => JSON.parse(f.data) as { type: string });
    for (const event of events) failures.push(...shapeEvent(event, 'cut stream'));
    expect(events.at(-1)?.type).toBe('error');

    await expect(client().messages.create(ask('nope'))).rejects.toBeInstanceOf(Anthropic.APIError);
    await expect(client().messages.stream(ask('cut')).finalMessage()).rejects.toBeInstanceOf(
      Anthropic.APIError,
    );
    expect(failures).toEqual([]);
  });
});
