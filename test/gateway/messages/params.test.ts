/**
 * Parameter fidelity on POST /v1/messages: every parameter is passed (mapped where the provider
 * spells it differently) or refused, never dropped, on every provider type; and the answer
 * direction (tool calls, stop reasons, usage) for each. A real gateway before the provider simulator.
 */
import Anthropic from '@anthropic-ai/sdk';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MESSAGES_REFUSED, messagesBody } from '#gateway/requests/messages-schema';
import { MESSAGES_MAPPED } from '#gateway/requests/messages-translate';
import { type RunningGateway, startGateway } from '../../harness/gateway.ts';
import { API_KEY, baseConfig, provider, workflow } from '../../harness/manifests.ts';
import { type ProviderName, type Simulator, startSimulator } from '../../simulator/index.ts';

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
    ...Object.values(TARGETS).map((t) =>
      workflow(`v${t.workflow}`, { requestType: 'vision', provider: t.provider, model: t.model }),
    ),
  ]);
});
afterAll(async () => {
  await gw?.close();
  await sim?.close();
});
beforeEach(() => sim.clearRequests());

const USER = [{ role: 'user', content: 'hi' }];
const PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

/** What each provider receives for `{model, max_tokens: 100, messages: [{role: user, content: hi}]}`. */
function baseBody(t: Target): Record<string, unknown> {
  const m = TARGETS[t].model;
  switch (t) {
    case 'openai':
    case 'compat':
      return { model: m, messages: USER, max_tokens: 100 };
    case 'azure':
      return { messages: USER, max_tokens: 100 };
    case 'anthropic':
      return { model: m, max_tokens: 100, messages: USER };
    case 'gemini':
      return {
        contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
        generationConfig: { maxOutputTokens: 100 },
      };
  }
}

const TOOL = {
  name: 'get_weather',
  description: 'Weather for a city.',
  input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
};
const OPENAI_TOOL = {
  type: 'function',
  function: { name: TOOL.name, description: TOOL.description, parameters: TOOL.input_schema },
};
const GEMINI_TOOL = [
  {
    functionDeclarations: [
      { name: TOOL.name, description: TOOL.description, parametersJsonSchema: TOOL.input_schema },
    ],
  },
];

type Want = { body: Record<string, unknown> } | { refused: string };
const sent = (body: Record<string, unknown> = {}): Want => ({ body });
const refused = (param: string): Want => ({ refused: param });
const openais = (body: Record<string, unknown>) => ({
  openai: sent(body),
  azure: sent(body),
  compat: sent(body),
});
const gen = (config: Record<string, unknown>): Want =>
  sent({ generationConfig: { maxOutputTokens: 100, ...config } });

interface Case {
  name: string;
  params: Record<string, unknown>;
  /** Request headers; the anthropic slot receives them when it is sent the body as written. */
  headers?: Record<string, string>;
  covers: string[];
  expect: Record<Target, Want>;
}

const SYSTEM_BLOCKS = [
  { type: 'text', text: 'Rule one.' },
  { type: 'text', text: 'Rule two.', cache_control: { type: 'ephemeral' } },
];
const TU = { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } };
const RESULT_BLOCKS = [
  { type: 'text', text: 'no such city', cache_control: { type: 'ephemeral', ttl: '1h' } },
  { type: 'text', text: 'try again' },
];
const ROUND_TRIP = [
  { role: 'user', content: 'Weather in Oslo?' },
  { role: 'assistant', content: [{ type: 'text', text: 'Looking.' }, TU] },
  {
    role: 'user',
    content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: RESULT_BLOCKS, is_error: true }],
  },
];
const OPENAI_ROUND_TRIP = [
  { role: 'user', content: 'Weather in Oslo?' },
  {
    role: 'assistant',
    content: 'Looking.',
    tool_calls: [
      { id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } },
    ],
  },
  { role: 'tool', tool_call_id: 'toolu_1', content: 'Error: no such city\ntry again' },
];

const CASES: Case[] = [
  {
    name: 'model, messages and max_tokens',
    params: {},
    covers: ['model', 'messages', 'max_tokens'],
    expect: { ...openais({}), anthropic: sent(), gemini: sent() },
  },
  {
    name: 'system as text blocks (cache_control reaches Claude; elsewhere a hint without effect)',
    params: { system: SYSTEM_BLOCKS },
    covers: ['system'],
    expect: {
      ...openais({ messages: [{ role: 'system', content: 'Rule one.\n\nRule two.' }, ...USER] }),
      anthropic: sent({ system: SYSTEM_BLOCKS }),
      gemini: sent({ systemInstruction: { parts: [{ text: 'Rule one.\n\nRule two.' }] } }),
    },
  },
  {
    name: 'temperature and top_p',
    params: { temperature: 0.5, top_p: 0.8 },
    covers: ['temperature', 'top_p'],
    expect: {
      ...openais({ temperature: 0.5, top_p: 0.8 }),
      anthropic: sent({ temperature: 0.5, top_p: 0.8 }),
      gemini: gen({ temperature: 0.5, topP: 0.8 }),
    },
  },
  {
    name: 'top_k',
    params: { top_k: 40 },
    covers: ['top_k'],
    expect: {
      openai: refused('top_k'),
      azure: refused('top_k'),
      compat: refused('top_k'),
      anthropic: sent({ top_k: 40 }),
      gemini: gen({ topK: 40 }),
    },
  },
  {
    name: 'stop_sequences',
    params: { stop_sequences: ['END'] },
    covers: ['stop_sequences'],
    expect: {
      ...openais({ stop: ['END'] }),
      anthropic: sent({ stop_sequences: ['END'] }),
      gemini: gen({ stopSequences: ['END'] }),
    },
  },
  {
    name: 'stop_sequences, five of them',
    params: { stop_sequences: ['A', 'B', 'C', 'D', 'E'] },
    covers: ['stop_sequences'],
    expect: {
      openai: refused('stop'),
      azure: refused('stop'),
      compat: refused('stop'),
      anthropic: sent({ stop_sequences: ['A', 'B', 'C', 'D', 'E'] }),
      gemini: gen({ stopSequences: ['A', 'B', 'C', 'D', 'E'] }),
    },
  },
  {
    name: 'metadata.user_id',
    params: { metadata: { user_id: 'u-9' } },
    covers: ['metadata'],
    expect: {
      ...openais({ user: 'u-9' }),
      anthropic: sent({ metadata: { user_id: 'u-9' } }),
      gemini: sent(),
    },
  },
  {
    name: 'tools and tool_choice any',
    params: { tools: [TOOL], tool_choice: { type: 'any' } },
    covers: ['tools', 'tool_choice'],
    expect: {
      ...openais({ tools: [OPENAI_TOOL], tool_choice: 'required' }),
      anthropic: sent({ tools: [TOOL], tool_choice: { type: 'any' } }),
      gemini: sent({ tools: GEMINI_TOOL, toolConfig: { functionCallingConfig: { mode: 'ANY' } } }),
    },
  },
  {
    name: 'tool_choice tool with disable_parallel_tool_use',
    params: {
      tools: [TOOL],
      tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true },
    },
    covers: ['tool_choice'],
    expect: {
      ...openais({
        tools: [OPENAI_TOOL],
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
        parallel_tool_calls: false,
      }),
      anthropic: sent({
        tools: [TOOL],
        tool_choice: { type: 'tool', name: 'get_weather', disable_parallel_tool_use: true },
      }),
      gemini: refused('parallel_tool_calls'),
    },
  },
  {
    name: 'thinking enabled (Claude gets it; elsewhere an effort level where a provider takes one)',
    params: { thinking: { type: 'enabled', budget_tokens: 2048 }, max_tokens: 4096 },
    covers: ['thinking'],
    expect: {
      ...openais({ reasoning_effort: 'low', max_tokens: 4096 }),
      anthropic: sent({ thinking: { type: 'enabled', budget_tokens: 2048 }, max_tokens: 4096 }),
      gemini: gen({ thinkingConfig: { thinkingBudget: 1024 }, maxOutputTokens: 4096 }),
    },
  },
  {
    name: 'thinking disabled (the default everywhere)',
    params: { thinking: { type: 'disabled' } },
    covers: ['thinking'],
    expect: { ...openais({}), anthropic: sent({ thinking: { type: 'disabled' } }), gemini: sent() },
  },
  {
    name: 'output_config.effort low',
    params: { output_config: { effort: 'low' } },
    covers: ['output_config'],
    expect: {
      ...openais({ reasoning_effort: 'low' }),
      anthropic: sent({ output_config: { effort: 'low' } }),
      gemini: gen({ thinkingConfig: { thinkingBudget: 1024 } }),
    },
  },
  {
    name: 'output_config.effort max (the highest level elsewhere)',
    params: { output_config: { effort: 'max' } },
    covers: ['output_config'],
    expect: {
      ...openais({ reasoning_effort: 'high' }),
      anthropic: sent({ output_config: { effort: 'max' } }),
      gemini: gen({ thinkingConfig: { thinkingBudget: 24576 } }),
    },
  },
  {
    name: "Claude Code's defaults ask nothing of other providers: effort high (Claude's default), adaptive thinking, clearing thinking",
    params: {
      output_config: { effort: 'high' },
      thinking: { type: 'adaptive' },
      context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
    },
    headers: { 'anthropic-beta': 'context-management-2025-06-27' },
    covers: ['output_config', 'thinking', 'context_management'],
    expect: {
      ...openais({}),
      anthropic: sent({
        output_config: { effort: 'high' },
        thinking: { type: 'adaptive' },
        context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
      }),
      gemini: sent(),
    },
  },
  {
    name: 'a system turn mid-conversation (with its beta)',
    params: {
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'system', content: 'Agent types: a, b.' },
      ],
    },
    headers: { 'anthropic-beta': 'mid-conversation-system-2026-04-07' },
    covers: ['messages'],
    expect: {
      ...openais({ messages: [...USER, { role: 'system', content: 'Agent types: a, b.' }] }),
      anthropic: sent({ messages: [...USER, { role: 'system', content: 'Agent types: a, b.' }] }),
      gemini: sent({ systemInstruction: { parts: [{ text: 'Agent types: a, b.' }] } }),
    },
  },
  {
    name: 'a tool round trip: is_error and tool_result blocks with cache_control reach Claude as sent',
    params: { tools: [TOOL], messages: ROUND_TRIP },
    covers: ['messages', 'tools'],
    expect: {
      ...openais({ tools: [OPENAI_TOOL], messages: OPENAI_ROUND_TRIP }),
      anthropic: sent({ tools: [TOOL], messages: ROUND_TRIP }),
      gemini: sent({
        tools: GEMINI_TOOL,
        contents: [
          { role: 'user', parts: [{ text: 'Weather in Oslo?' }] },
          {
            role: 'model',
            parts: [{ text: 'Looking.' }, { functionCall: { name: 'get_weather', args: { city: 'Oslo' } } }],
          },
          {
            role: 'user',
            parts: [
              {
                functionResponse: {
                  name: 'get_weather',
                  response: { result: 'Error: no such city\ntry again' },
                },
              },
            ],
          },
        ],
      }),
    },
  },
  {
    name: 'cache_control on a tool and a message block reaches Claude; elsewhere a hint without effect',
    params: {
      tools: [{ ...TOOL, cache_control: { type: 'ephemeral' } }],
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] },
      ],
    },
    covers: ['tools', 'messages'],
    expect: {
      ...openais({ tools: [OPENAI_TOOL] }),
      anthropic: sent({
        tools: [{ ...TOOL, cache_control: { type: 'ephemeral' } }],
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] },
        ],
      }),
      gemini: sent({ tools: GEMINI_TOOL }),
    },
  },
  {
    name: 'service_tier standard_only',
    params: { service_tier: 'standard_only' },
    covers: ['service_tier'],
    expect: {
      openai: sent({ service_tier: 'default' }),
      azure: sent({ service_tier: 'default' }),
      compat: refused('service_tier'),
      anthropic: sent({ service_tier: 'standard_only' }),
      gemini: sent(),
    },
  },
];
const COVERED_BELOW = ['stream'];

describe('every parameter of the Messages schema is accounted for', () => {
  it('each key is mapped or refused, never both, and each mapped key has a case', () => {
    const keys = Object.keys(messagesBody.shape);
    const mapped = new Set<string>(MESSAGES_MAPPED);
    const refusedSet = new Set<string>(MESSAGES_REFUSED);
    expect(keys.filter((k) => !mapped.has(k) && !refusedSet.has(k))).toEqual([]);
    expect(keys.filter((k) => mapped.has(k) && refusedSet.has(k))).toEqual([]);
    const covered = new Set([...CASES.flatMap((c) => c.covers), ...COVERED_BELOW]);
    expect(MESSAGES_MAPPED.filter((p) => !covered.has(p))).toEqual([]);
  });
});

interface ErrorBody {
  type: 'error';
  error: { type: string; message: string; param?: string; code?: string };
}

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: {
      'x-api-key': API_KEY,
      'anthropic-version': '2023-06-01',
      'content-type': 'application/json',
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text, json: JSON.parse(text) as unknown };
}
const create = (t: Target, params: Record<string, unknown>, headers: Record<string, string> = {}) =>
  post('/v1/messages', { model: TARGETS[t].workflow, max_tokens: 100, messages: USER, ...params }, headers);

describe.each(CASES)('$name', (c) => {
  it.each(ALL)('%s', async (t) => {
    const want = c.expect[t];
    const res = await create(t, c.params, c.headers);
    const upstream = sim.requests().filter((r) => r.provider === TARGETS[t].sim);
    if ('refused' in want) {
      expect(upstream).toEqual([]);
      expect(res.status).toBe(400);
      expect((res.json as ErrorBody).error).toMatchObject({ type: 'invalid_request_error' });
      expect((res.json as ErrorBody).error.message).toContain(`"${want.refused}"`);
      return;
    }
    expect(res.status, res.text).toBe(200);
    expect(upstream).toHaveLength(1);
    expect(upstream[0]!.body).toEqual({ ...baseBody(t), ...want.body });
    // Forwarded only with the body as the client wrote it.
    const beta = c.headers?.['anthropic-beta'];
    if (beta) expect(upstream[0]!.headers['anthropic-beta']).toBe(t === 'anthropic' ? beta : undefined);
  });
});

describe('refused by the surface: 400 invalid_request_error naming it, nothing sent', () => {
  const cases: [string, Record<string, unknown>][] = [
    ['container', { container: 'c1' }],
    ['mcp_servers', { mcp_servers: [{ type: 'url', url: 'https://x', name: 'x' }] }],
    ['seed', { seed: 1 }],
    ['metadata.session', { metadata: { session: 'x' } }],
    ['tools[0].type', { tools: [{ type: 'web_search_20250305', name: 'web_search' }] }],
    [
      'messages[0].content[0].type',
      { messages: [{ role: 'user', content: [{ type: 'document', source: {} }] }] },
    ],
  ];
  it.each(cases)('%s', async (param, params) => {
    const res = await create('anthropic', params);
    expect(res.status, res.text).toBe(400);
    expect(res.json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', param } });
    expect(sim.requests()).toEqual([]);
  });
});

describe('bad input: a 400 in Anthropic shape, never a 5xx', () => {
  const TU = { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'x' } };
  const cases: [string, Record<string, unknown>, string][] = [
    ['missing max_tokens', { max_tokens: undefined }, 'max_tokens'],
    ['empty messages', { messages: [] }, 'messages'],
    ['bad role', { messages: [{ role: 'tool', content: 'x' }] }, 'messages[0].role'],
    [
      'malformed block',
      { messages: [{ role: 'user', content: [{ type: 'text' }] }] },
      'messages[0].content[0].text',
    ],
    [
      'tool_result without its tool_use',
      {
        messages: [
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: 'y' }] },
        ],
      },
      'messages[0].content[0].tool_use_id',
    ],
    [
      'tool_use without its tool_result',
      {
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: [TU] },
          { role: 'user', content: 'next' },
        ],
      },
      'messages[2]',
    ],
    ['temperature above 1', { temperature: 1.5 }, 'temperature'],
    [
      'context editing other than clearing thinking',
      { context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] } },
      'context_management.edits[0].type',
    ],
    ['forced tool without tools', { tool_choice: { type: 'any' } }, 'tool_choice'],
    [
      'a thinking block in a user turn',
      { messages: [{ role: 'user', content: [{ type: 'thinking', thinking: 'x', signature: 's' }] }] },
      'messages[0].content[0]',
    ],
    [
      'a thinking block without its signature',
      {
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: [{ type: 'thinking', thinking: 'x' }] },
          { role: 'user', content: 'again' },
        ],
      },
      'messages[1].content[0].signature',
    ],
  ];
  it.each(cases)('%s', async (_name, params, param) => {
    const res = await create('anthropic', params);
    expect(res.status, res.text).toBe(400);
    expect(res.json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', param } });
    expect(sim.requests()).toEqual([]);
  });

  it('a body that is not JSON', async () => {
    const res = await post('/v1/messages', '{"model":');
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });

  it('an unknown path under /v1/messages is a not_found_error', async () => {
    const res = await post('/v1/messages/batches', {});
    expect(res.status).toBe(404);
    expect(res.json).toMatchObject({ type: 'error', error: { type: 'not_found_error' } });
  });

  it('Claude Code request shape: ?beta=true and anthropic-beta headers are accepted', async () => {
    const res = await post(
      '/v1/messages?beta=true',
      { model: 'p-anthropic', max_tokens: 100, messages: USER },
      { 'anthropic-beta': 'claude-code-20250219,interleaved-thinking-2025-05-14' },
    );
    expect(res.status, res.text).toBe(200);
  });
});

describe('the answer direction: each provider type answers in Anthropic blocks', () => {
  const sdk = () => new Anthropic({ baseURL: gw.url, apiKey: API_KEY, maxRetries: 0, timeout: 15_000 });

  it.each(ALL)('%s: tool_use block, stop_reason tool_use, usage', async (t) => {
    const m = await sdk().messages.create({
      model: TARGETS[t].workflow,
      max_tokens: 200,
      tools: [TOOL as Anthropic.Tool],
      tool_choice: { type: 'any' },
      messages: [{ role: 'user', content: 'Weather in Lima?' }],
    });
    expect(m.stop_reason).toBe('tool_use');
    const use = m.content.find((b) => b.type === 'tool_use');
    expect(use?.type === 'tool_use' && typeof (use.input as { city?: unknown }).city).toBe('string');
    expect(m.usage.input_tokens).toBeGreaterThan(0);
  });

  it.each(ALL)('%s: streamed tool_use the SDK assembles', async (t) => {
    const m = await sdk()
      .messages.stream({
        model: TARGETS[t].workflow,
        max_tokens: 200,
        tools: [TOOL as Anthropic.Tool],
        tool_choice: { type: 'any' },
        messages: [{ role: 'user', content: 'Weather in Quito?' }],
      })
      .finalMessage();
    expect(m.stop_reason).toBe('tool_use');
    const use = m.content.find((b) => b.type === 'tool_use');
    expect(use?.type === 'tool_use' && typeof (use.input as { city?: unknown }).city).toBe('string');
    // The generic OpenAI-compatible dialect is not sent stream_options, so its stream reports no usage.
    if (t !== 'compat') expect(m.usage.output_tokens).toBeGreaterThan(0);
  });

  it.each(ALL)('%s: a stop sequence that fired is stop_sequence where the provider says so', async (t) => {
    const m = await sdk().messages.create({
      model: TARGETS[t].workflow,
      max_tokens: 100,
      stop_sequences: ['reply'],
      messages: [{ role: 'user', content: 'hi' }],
    });
    const text = m.content[0]?.type === 'text' ? m.content[0].text : '';
    expect(text).not.toContain('reply');
    // Anthropic names the sequence; OpenAI's and Gemini's `stop` covers a natural end too.
    const named = t === 'anthropic';
    expect({ stop_reason: m.stop_reason, stop_sequence: m.stop_sequence }).toEqual(
      named
        ? { stop_reason: 'stop_sequence', stop_sequence: 'reply' }
        : { stop_reason: 'end_turn', stop_sequence: null },
    );
  });

  it.each(ALL)('%s: max_tokens reached is stop_reason max_tokens', async (t) => {
    const m = await sdk().messages.create({
      model: TARGETS[t].workflow,
      max_tokens: 1,
      messages: [{ role: 'user', content: 'x'.repeat(400) }],
    });
    expect(m.stop_reason).toBe('max_tokens');
  });

  it.each(ALL)(
    '%s: an image inside a tool_result reaches the provider (after the result elsewhere)',
    async (t) => {
      const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: PNG } };
      const result = {
        type: 'tool_result',
        tool_use_id: 'toolu_1',
        content: [{ type: 'text', text: 'a map' }, image],
      };
      const messages = [
        { role: 'user', content: 'Map of Oslo?' },
        {
          role: 'assistant',
          content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Oslo' } }],
        },
        { role: 'user', content: [result] },
      ];
      const res = await post('/v1/messages', {
        model: `v${TARGETS[t].workflow}`,
        max_tokens: 100,
        tools: [TOOL],
        messages,
      });
      expect(res.status, res.text).toBe(200);
      const body = sim.requests().filter((r) => r.provider === TARGETS[t].sim)[0]!.body as {
        messages?: unknown[];
      };
      if (t === 'anthropic') expect(body.messages).toEqual(messages);
      else if (t !== 'gemini')
        expect(body.messages?.slice(-2)).toEqual([
          { role: 'tool', tool_call_id: 'toolu_1', content: 'a map' },
          {
            role: 'user',
            content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } }],
          },
        ]);
      else expect(JSON.stringify(body)).toContain(PNG);
    },
  );

  it.each(ALL)('%s: an image block reaches the provider as an image', async (t) => {
    const png = PNG;
    const res = await post('/v1/messages', {
      model: `v${TARGETS[t].workflow}`,
      max_tokens: 100,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
          ],
        },
      ],
    });
    expect(res.status, res.text).toBe(200);
    const upstream = sim.requests().filter((r) => r.provider === TARGETS[t].sim);
    expect(JSON.stringify(upstream[0]!.body)).toContain(png);
    // A chat workflow refuses images: a vision workflow is the one that takes them.
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } };
    const chat = await create(t, { messages: [{ role: 'user', content: [image] }] });
    expect(chat.status).toBe(400);
    expect(chat.json).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
  });
});
