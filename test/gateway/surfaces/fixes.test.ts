/**
 * Two behaviours every surface shares: a workflow's structured-output schema governs even when the
 * client asks for plain JSON (json_object), and test mode answers with text after a tool result, so
 * an agent loop against test mode ends.
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../harness/gateway.ts';
import { API_KEY, baseConfig, workflow } from '../../harness/manifests.ts';
import { type Simulator, startSimulator } from '../../simulator/index.ts';

const INVOICE = {
  type: 'object',
  additionalProperties: false,
  required: ['number', 'total'],
  properties: { number: { type: 'string' }, total: { type: 'number' } },
};
const TOOL = {
  name: 'lookup',
  description: 'Looks a thing up.',
  parameters: { type: 'object', properties: { q: { type: 'string' } }, required: ['q'] },
};

let sim: Simulator;
let gw: RunningGateway;
beforeAll(async () => {
  sim = await startSimulator();
  gw = await startGateway([
    ...baseConfig(sim.url),
    workflow('invoice-extract', {
      provider: 'oai',
      model: 'gpt-4o-mini',
      structuredOutput: { schema: INVOICE },
    }),
    workflow('sandbox', { provider: 'oai', model: 'gpt-4o-mini', testMode: true }),
  ]);
});
afterAll(async () => {
  await gw?.close();
  await sim?.close();
});

const openai = () => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: API_KEY, maxRetries: 0 });
const anthropic = () => new Anthropic({ baseURL: gw.url, apiKey: API_KEY, maxRetries: 0 });

describe('json_object on a workflow with a schema: the schema governs', () => {
  const schemaFormat = { type: 'json_schema', json_schema: { name: 'invoice-extract', schema: INVOICE } };

  it('chat completions', async () => {
    sim.clearRequests();
    const r = await openai().chat.completions.create({
      model: 'invoice-extract',
      messages: [{ role: 'user', content: 'Invoice INV-1, total 12.5' }],
      response_format: { type: 'json_object' },
    });
    expect(Object.keys(JSON.parse(r.choices[0]!.message.content!)).sort()).toEqual(['number', 'total']);
    expect((sim.requests()[0]!.body as { response_format: unknown }).response_format).toEqual(schemaFormat);
  });

  it('responses (text.format json_object)', async () => {
    sim.clearRequests();
    const r = await openai().responses.create({
      model: 'invoice-extract',
      input: 'Invoice INV-2, total 3',
      text: { format: { type: 'json_object' } },
    });
    expect(Object.keys(JSON.parse(r.output_text)).sort()).toEqual(['number', 'total']);
    expect((sim.requests()[0]!.body as { response_format: unknown }).response_format).toEqual(schemaFormat);
  });

  it('native /v1/ai', async () => {
    sim.clearRequests();
    const res = await fetch(`${gw.url}/v1/ai`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        workflow: 'invoice-extract',
        messages: [{ role: 'user', content: 'INV-3 total 9' }],
        response_format: { type: 'json_object' },
      }),
    });
    expect(res.status).toBe(200);
    expect(Object.keys((await res.json()) as object).sort()).toEqual(['number', 'total']);
  });
});

describe('test mode answers with text after a tool result', () => {
  it('chat completions: role tool', async () => {
    const tools = [{ type: 'function' as const, function: TOOL }];
    const first = await openai().chat.completions.create({
      model: 'sandbox',
      messages: [{ role: 'user', content: 'find x' }],
      tools,
    });
    const call = first.choices[0]!.message.tool_calls![0]!;
    const second = await openai().chat.completions.create({
      model: 'sandbox',
      tools,
      messages: [
        { role: 'user', content: 'find x' },
        first.choices[0]!.message,
        { role: 'tool', tool_call_id: call.id, content: 'x is 42' },
      ],
    });
    expect(second.choices[0]!.finish_reason).toBe('stop');
    expect(second.choices[0]!.message.content).toContain('x is 42');
  });

  it('responses: function_call_output', async () => {
    const tools = [{ type: 'function' as const, strict: false, ...TOOL }];
    const first = await openai().responses.create({ model: 'sandbox', input: 'find y', tools });
    const call = first.output.find((o) => o.type === 'function_call');
    if (call?.type !== 'function_call') throw new Error('no call');
    const second = await openai().responses.create({
      model: 'sandbox',
      previous_response_id: first.id,
      tools,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: 'y is 7' }],
    });
    expect(second.output_text).toContain('y is 7');
  });

  it('messages: tool_result', async () => {
    const tools: Anthropic.Tool[] = [
      {
        name: TOOL.name,
        description: TOOL.description,
        input_schema: TOOL.parameters as Anthropic.Tool.InputSchema,
      },
    ];
    const first = await anthropic().messages.create({
      model: 'sandbox',
      max_tokens: 100,
      tools,
      messages: [{ role: 'user', content: 'find z' }],
    });
    const use = first.content.find((b) => b.type === 'tool_use');
    if (use?.type !== 'tool_use') throw new Error('no tool_use');
    const second = await anthropic().messages.create({
      model: 'sandbox',
      max_tokens: 100,
      tools,
      messages: [
        { role: 'user', content: 'find z' },
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'z is 1' }] },
      ],
    });
    expect(second.stop_reason).toBe('end_turn');
    expect(second.content[0]?.type === 'text' && second.content[0].text).toContain('z is 1');
  });
});
