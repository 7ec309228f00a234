/**
 * Parameter fidelity on POST /v1/responses: every parameter is passed (mapped where the provider
 * spells it differently) or refused, never dropped, on every provider type. A real gateway in front
 * of the provider simulator; each case asserts the exact body the provider received, or the refusal.
 * The other direction: what each provider answers comes back as the same output items and usage.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RESPONSES_REFUSED, responsesBody } from '#gateway/requests/responses-schema';
import { RESPONSES_MAPPED } from '#gateway/requests/responses-translate';
import { type RunningGateway, startGateway } from '../../harness/gateway.ts';
import { API_KEY, baseConfig, provider, workflow } from '../../harness/manifests.ts';
import { type ProviderName, type Simulator, startSimulator } from '../../simulator/index.ts';
import { rawJson } from '../compat/helpers.ts';

const TARGETS = {
  openai: { workflow: 'p-openai', provider: 'oai', model: 'gpt-4o-mini', sim: 'openai' },
  azure: { workflow: 'p-azure', provider: 'azure', model: 'gpt4o-deploy', sim: 'azure-openai' },
  compat: { workflow: 'p-compat', provider: 'local', model: 'llama-3.1-8b', sim: 'openai' },
  anthropic: { workflow: 'p-anthropic', provider: 'claude', model: 'claude-haiku-4-5', sim: 'anthropic' },
  gemini: { workflow: 'p-gemini', provider: 'gem', model: 'gemini-2.5-flash', sim: 'gemini' },
} as const satisfies Record<string, { workflow: string; provider: string; model: string; sim: ProviderName }>;
type Target = keyof typeof TARGETS;
const ALL = Object.keys(TARGETS) as Target[];

let sim: Simulator;
let gw: RunningGateway;

beforeAll(async () => {
  sim = await startSimulator();
  gw = await startGateway([
    ...baseConfig(sim.url, ['gpt-4o-mini', 'gpt4o-deploy', 'claude-haiku-4-5', 'gemini-2.5-flash']),
    ...provider('local', 'openai-compatible', sim.url, ['llama-3.1-8b']),
    ...Object.values(TARGETS).map((t) => workflow(t.workflow, { provider: t.provider, model: t.model })),
  ]);
});
afterAll(async () => {
  await gw?.close();
  await sim?.close();
});
beforeEach(() => sim.clearRequests());

const USER = [{ role: 'user', content: 'hi' }];

function baseBody(t: Target): Record<string, unknown> {
  const m = TARGETS[t].model;
  switch (t) {
    case 'openai':
    case 'compat':
      return { model: m, messages: USER };
    case 'azure':
      return { messages: USER };
    case 'anthropic':
      return { model: m, max_tokens: 4096, messages: USER };
    case 'gemini':
      return { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] };
  }
}

const FN = {
  type: 'function',
  name: 'get_weather',
  description: 'Weather for a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
} as const;
const OPENAI_FN = {
  type: 'function',
  function: { name: FN.name, description: FN.description, parameters: FN.parameters },
};
const ANTHROPIC_FN = { name: FN.name, description: FN.description, input_schema: FN.parameters };
const GEMINI_FN = [
  {
    functionDeclarations: [
      { name: FN.name, description: FN.description, parametersJsonSchema: FN.parameters },
    ],
  },
];
const SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['a'],
  properties: { a: { type: 'string' } },
};

type Want =
  | { body: Record<string, unknown> }
  | { refused: string }
  /** Checked on the upstream body alone: the simulator does not follow prompt instructions. */
  | { check: (body: Record<string, unknown>) => void };
const sent = (body: Record<string, unknown> = {}): Want => ({ body });
const refused = (param: string): Want => ({ refused: param });
const openais = (body: Record<string, unknown>) => ({
  openai: sent(body),
  azure: sent(body),
  compat: sent(body),
});
const gen = (config: Record<string, unknown>): Want => sent({ generationConfig: config });

interface Case {
  name: string;
  params: Record<string, unknown>;
  covers: string[];
  expect: Record<Target, Want>;
}

const CASES: Case[] = [
  {
    name: 'model and a string input',
    params: {},
    covers: ['model', 'input'],
    expect: { ...openais({}), anthropic: sent(), gemini: sent() },
  },
  {
    name: 'instructions become the system message',
    params: { instructions: 'Be brief.' },
    covers: ['instructions'],
    expect: {
      ...openais({ messages: [{ role: 'system', content: 'Be brief.' }, ...USER] }),
      anthropic: sent({ system: 'Be brief.' }),
      gemini: sent({ systemInstruction: { parts: [{ text: 'Be brief.' }] } }),
    },
  },
  {
    name: 'temperature, top_p and max_output_tokens',
    params: { temperature: 0.4, top_p: 0.9, max_output_tokens: 77 },
    covers: ['temperature', 'top_p', 'max_output_tokens'],
    expect: {
      ...openais({ temperature: 0.4, top_p: 0.9, max_tokens: 77 }),
      anthropic: sent({ temperature: 0.4, top_p: 0.9, max_tokens: 77 }),
      gemini: gen({ temperature: 0.4, topP: 0.9, maxOutputTokens: 77 }),
    },
  },
  {
    name: 'function tools, tool_choice required',
    params: { tools: [FN], tool_choice: 'required' },
    covers: ['tools', 'tool_choice'],
    expect: {
      ...openais({ tools: [OPENAI_FN], tool_choice: 'required' }),
      anthropic: sent({ tools: [ANTHROPIC_FN], tool_choice: { type: 'any' } }),
      gemini: sent({ tools: GEMINI_FN, toolConfig: { functionCallingConfig: { mode: 'ANY' } } }),
    },
  },
  {
    name: 'parallel_tool_calls: false',
    params: { tools: [FN], parallel_tool_calls: false },
    covers: ['parallel_tool_calls'],
    expect: {
      ...openais({ tools: [OPENAI_FN], parallel_tool_calls: false }),
      anthropic: sent({
        tools: [ANTHROPIC_FN],
        tool_choice: { type: 'auto', disable_parallel_tool_use: true },
      }),
      gemini: refused('parallel_tool_calls'),
    },
  },
  {
    name: 'text.format json_schema',
    params: { text: { format: { type: 'json_schema', name: 'out', schema: SCHEMA, strict: true } } },
    covers: ['text'],
    expect: {
      openai: sent({
        response_format: { type: 'json_schema', json_schema: { name: 'out', schema: SCHEMA, strict: true } },
      }),
      azure: sent({
        response_format: { type: 'json_schema', json_schema: { name: 'out', schema: SCHEMA, strict: true } },
      }),
      // The generic OpenAI-compatible dialect gets json_object plus the schema in the system prompt.
      compat: {
        check: (b) => {
          expect(b.response_format).toEqual({ type: 'json_object' });
          expect(JSON.stringify((b.messages as unknown[])[0])).toContain('\\"a\\"');
        },
      },
      anthropic: { check: (b) => expect(String(b.system)).toContain('"a"') },
      gemini: gen({ responseMimeType: 'application/json', responseJsonSchema: SCHEMA }),
    },
  },
  {
    name: 'reasoning.effort',
    params: { reasoning: { effort: 'low' } },
    covers: ['reasoning'],
    expect: {
      ...openais({ reasoning_effort: 'low' }),
      anthropic: refused('reasoning_effort'),
      gemini: gen({ thinkingConfig: { thinkingBudget: 1024 } }),
    },
  },
  {
    name: 'user',
    params: { user: 'u-1' },
    covers: ['user'],
    expect: {
      ...openais({ user: 'u-1' }),
      anthropic: sent({ metadata: { user_id: 'u-1' } }),
      gemini: sent(),
    },
  },
  {
    name: 'service_tier default',
    params: { service_tier: 'default' },
    covers: ['service_tier'],
    expect: {
      openai: sent({ service_tier: 'default' }),
      azure: sent({ service_tier: 'default' }),
      compat: refused('service_tier'),
      anthropic: sent({ service_tier: 'standard_only' }),
      gemini: sent(),
    },
  },
  {
    name: 'gateway-side: store, metadata, truncation disabled, and the hints (nothing upstream)',
    params: {
      store: false,
      metadata: { team: 'a' },
      truncation: 'disabled',
      include: ['reasoning.encrypted_content'],
      reasoning: { summary: 'auto' },
      prompt_cache_key: 'conv-1',
      client_metadata: { turn_id: 't1' },
    },
    covers: ['store', 'metadata', 'truncation', 'include', 'prompt_cache_key', 'client_metadata'],
    expect: { ...openais({}), anthropic: sent(), gemini: sent() },
  },
];
// background: test/gateway/responses/background.test.ts.
const COVERED_BELOW = ['stream', 'previous_response_id', 'conversation', 'background'];

describe('every parameter of the Responses schema is accounted for', () => {
  it('each key is mapped or refused, never both, and each mapped key has a case', () => {
    const keys = Object.keys(responsesBody.shape);
    const mapped = new Set<string>(RESPONSES_MAPPED);
    const refusedSet = new Set<string>(RESPONSES_REFUSED);
    expect(keys.filter((k) => !mapped.has(k) && !refusedSet.has(k))).toEqual([]);
    expect(keys.filter((k) => mapped.has(k) && refusedSet.has(k))).toEqual([]);
    const covered = new Set([...CASES.flatMap((c) => c.covers), ...COVERED_BELOW]);
    expect(RESPONSES_MAPPED.filter((p) => !covered.has(p))).toEqual([]);
  });
});

interface ErrorBody {
  error: { message: string; type: string; code: string; param: string | null };
}

const create = (t: Target, params: Record<string, unknown>) =>
  rawJson(gw.url, '/v1/responses', { body: { model: TARGETS[t].workflow, input: 'hi', ...params } });

describe.each(CASES)('$name', (c) => {
  it.each(ALL)('%s', async (t) => {
    const want = c.expect[t];
    const res = await create(t, c.params);
    const upstream = sim.requests().filter((r) => r.provider === TARGETS[t].sim);
    if ('refused' in want) {
      expect(upstream).toEqual([]);
      expect(res.status).toBe(400);
      expect((res.json as ErrorBody).error).toMatchObject({ code: 'unsupported_parameter' });
      expect((res.json as ErrorBody).error.message).toContain(`"${want.refused}"`);
      return;
    }
    expect(upstream).toHaveLength(1);
    const body = upstream[0]!.body as Record<string, unknown>;
    if ('check' in want) return want.check(body);
    expect(res.status, res.text).toBe(200);
    expect(body).toEqual({ ...baseBody(t), ...want.body });
  });
});

describe('refused by the surface: 400 unsupported_parameter naming it, nothing sent', () => {
  const SAMPLES: Record<(typeof RESPONSES_REFUSED)[number], unknown> = {
    access_programs: { cyber: 'standard' },
    context_management: [{ type: 'compaction' }],
    image: { size: '1024x1024' },
    max_tool_calls: 3,
    moderation: { mode: 'strict' },
    prompt: { id: 'pmpt_1' },
    prompt_cache_options: { mode: 'x' },
    prompt_cache_retention: '24h',
    safety_identifier: 'h',
    top_logprobs: 2,
    stream_options: { include_obfuscation: false },
  };
  const cases: [string, Record<string, unknown>][] = [
    ...RESPONSES_REFUSED.map((p): [string, Record<string, unknown>] => [p, { [p]: SAMPLES[p] }]),
    ['seed', { seed: 1 }],
    ['tools[0].type', { tools: [{ type: 'web_search' }] }],
    ['text.verbosity', { text: { verbosity: 'low' } }],
    ['include', { include: ['message.output_text.logprobs'] }],
    ['truncation', { truncation: 'auto' }],
    ['input[0].type', { input: [{ type: 'reasoning', summary: [] }] }],
    [
      'input[0].content[0].file_id',
      { input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'f' }] }] },
    ],
  ];
  it.each(cases)('%s', async (param, params) => {
    const res = await create('openai', params);
    expect(res.status, res.text).toBe(400);
    expect((res.json as ErrorBody).error).toMatchObject({ code: 'unsupported_parameter', param });
    expect(sim.requests()).toEqual([]);
  });

  it('null and false ask for nothing', async () => {
    const res = await create('openai', { background: false, include: [], prompt_cache_key: null });
    expect(res.status, res.text).toBe(200);
  });
});

describe('bad input: a 400/404 in OpenAI shape, never a 5xx', () => {
  const cases: [string, Record<string, unknown>, number, string | null][] = [
    ['missing input', { input: undefined }, 400, 'input'],
    ['empty input list', { input: [] }, 400, 'input'],
    ['malformed item', { input: [{ role: 'user' }] }, 400, 'input[0].content'],
    ['bad role', { input: [{ role: 'tool', content: 'x' }] }, 400, 'input[0].role'],
    [
      'output without its call',
      { input: [{ type: 'function_call_output', call_id: 'call_x', output: 'y' }] },
      400,
      'input[0].call_id',
    ],
    [
      'a call without its output',
      {
        input: [
          { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
          { role: 'user', content: 'next' },
        ],
      },
      400,
      'input[1]',
    ],
    ['unknown previous_response_id', { previous_response_id: 'resp_nope' }, 404, 'previous_response_id'],
    ['unknown conversation', { conversation: 'conv_nope' }, 404, 'conversation'],
    ['conversation not an id', { conversation: 7 }, 400, 'conversation'],
    [
      'conversation with previous_response_id',
      { conversation: { id: 'conv_1' }, previous_response_id: 'resp_1' },
      400,
      'conversation',
    ],
    ['temperature out of range', { temperature: 3 }, 400, 'temperature'],
  ];
  it.each(cases)('%s', async (_name, params, status, param) => {
    const res = await create('openai', params);
    expect(res.status, res.text).toBe(status);
    expect((res.json as ErrorBody).error.param).toBe(param);
    expect(sim.requests()).toEqual([]);
  });

  it('a body that is not JSON', async () => {
    const res = await fetch(`${gw.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: '{"model":',
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as ErrorBody).error.type).toBe('invalid_request_error');
  });
});

describe('the answer direction: each provider type answers with the same items', () => {
  const sdk = () => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: API_KEY, maxRetries: 0, timeout: 15_000 });

  it.each(ALL)('%s: a tool call becomes a function_call item; usage is carried', async (t) => {
    const r = await sdk().responses.create({
      model: TARGETS[t].workflow,
      input: 'Weather in Lima?',
      tools: [{ ...FN, strict: false }],
      tool_choice: 'required',
    });
    const call = r.output.find((o) => o.type === 'function_call');
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', status: 'completed' });
    expect(call?.type === 'function_call' && typeof JSON.parse(call.arguments).city).toBe('string');
    expect(r.usage!.input_tokens).toBeGreaterThan(0);
    expect(r.usage!.total_tokens).toBe(r.usage!.input_tokens + r.usage!.output_tokens);
  });

  it.each(ALL)('%s: streamed, the same function_call item', async (t) => {
    const stream = sdk().responses.stream({
      model: TARGETS[t].workflow,
      input: 'Weather in Quito?',
      tools: [{ ...FN, strict: false }],
      tool_choice: 'required',
    });
    const final = await stream.finalResponse();
    const call = final.output.find((o) => o.type === 'function_call');
    expect(call?.type === 'function_call' && typeof JSON.parse(call.arguments).city).toBe('string');
    const body = sim.requests()[0]!;
    expect(body.provider).toBe(TARGETS[t].sim);
  });

  it.each(ALL)('%s: max_output_tokens reached is status incomplete', async (t) => {
    const r = await sdk().responses.create({
      model: TARGETS[t].workflow,
      input: 'x'.repeat(400),
      max_output_tokens: 1,
    });
    expect(r.status).toBe('incomplete');
    expect(r.incomplete_details).toEqual({ reason: 'max_output_tokens' });
  });
});
