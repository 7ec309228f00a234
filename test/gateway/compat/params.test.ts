/**
 * Parameter fidelity on POST /v1/chat/completions (docs/api.md, "Compatible parameters"): every compatible parameter is passed
 * on (mapped where the provider spells it differently) or refused, never dropped. A real gateway in
 * front of the provider simulator; each case asserts the exact body the provider received, or the
 * refusal: 400 unsupported_parameter from the surface, or a provider slot that cannot honour the
 * parameter (UPSTREAM_UNSUPPORTED), which sends nothing and lets the failover chain move on.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { buildOpenAIBody } from '#gateway/providers/openai/request';
import { compatDialect } from '#gateway/providers/openai-compatible/request';
import type { ChatRequest, UpstreamTarget } from '#gateway/providers/types';
import { MAPPED_CHAT_PARAMS, UNSUPPORTED_CHAT_PARAMS } from '#gateway/requests/compat-chat';
import { compatChatBody } from '#gateway/requests/compat-schema';
import { UpstreamError } from '#gateway/upstream/errors';
import { type RunningGateway, startGateway } from '../../harness/gateway.ts';
import {
  API_KEY,
  baseConfig,
  bedrockProvider,
  provider,
  SIM_AWS_KEYS,
  simGoogleAccount,
  vertexProvider,
  workflow,
} from '../../harness/manifests.ts';
import { type ProviderName, type Simulator, startSimulator } from '../../simulator/index.ts';
import { rawJson } from './helpers.ts';

/** One workflow per provider type, plus a Gemini 3 model (thinking levels) and a failover pair. */
const TARGETS = {
  openai: { workflow: 'p-openai', provider: 'oai', model: 'gpt-4o-mini', sim: 'openai' },
  azure: { workflow: 'p-azure', provider: 'azure', model: 'gpt4o-deploy', sim: 'azure-openai' },
  compat: { workflow: 'p-compat', provider: 'local', model: 'llama-3.1-8b', sim: 'openai' },
  anthropic: { workflow: 'p-anthropic', provider: 'claude', model: 'claude-haiku-4-5', sim: 'anthropic' },
  gemini: { workflow: 'p-gemini', provider: 'gem', model: 'gemini-2.5-flash', sim: 'gemini' },
  gemini3: { workflow: 'p-gemini3', provider: 'gem', model: 'gemini-3-flash-preview', sim: 'gemini' },
  bedrock: {
    workflow: 'p-bedrock',
    provider: 'bed',
    model: 'anthropic.claude-3-5-haiku-20241022-v1:0',
    sim: 'bedrock',
  },
  vertex: { workflow: 'p-vertex', provider: 'vtx', model: 'gemini-2.5-flash', sim: 'vertex-ai' },
  vertexClaude: {
    workflow: 'p-vertex-claude',
    provider: 'vtx',
    model: 'claude-haiku-4-5@20251001',
    sim: 'vertex-ai',
  },
  cohere: { workflow: 'p-cohere', provider: 'coh', model: 'command-a-03-2025', sim: 'cohere' },
} as const satisfies Record<string, { workflow: string; provider: string; model: string; sim: ProviderName }>;
type Target = keyof typeof TARGETS;
const MAIN: readonly Target[] = [
  'openai',
  'azure',
  'compat',
  'anthropic',
  'gemini',
  'bedrock',
  'vertex',
  'vertexClaude',
  'cohere',
];

const MODELS = [
  'gpt-4o-mini',
  'gpt4o-deploy',
  'claude-haiku-4-5',
  'gemini-2.5-flash',
  'gemini-3-flash-preview',
];

let sim: Simulator;
let gw: RunningGateway;

beforeAll(async () => {
  const google = simGoogleAccount();
  sim = await startSimulator({ aws: SIM_AWS_KEYS, google: google.sim });
  gw = await startGateway([
    ...baseConfig(sim.url, MODELS),
    ...bedrockProvider('bed', sim.url, [TARGETS.bedrock.model]),
    ...vertexProvider(
      'vtx',
      sim.url,
      [TARGETS.vertex.model, TARGETS.vertexClaude.model],
      google.key(sim.url),
    ),
    ...provider('coh', 'cohere', sim.url, [TARGETS.cohere.model]),
    // An OpenAI-compatible server the gateway cannot identify: the generic dialect.
    ...provider('local', 'openai-compatible', sim.url, ['llama-3.1-8b']),
    ...Object.values(TARGETS).map((t) => workflow(t.workflow, { provider: t.provider, model: t.model })),
    workflow('claude-then-openai', {
      provider: 'claude',
      model: 'claude-haiku-4-5',
      backups: [{ provider: 'oai', model: 'gpt-4o-mini' }],
    }),
  ]);
});
afterAll(async () => {
  await gw?.close();
  await sim?.close();
});
beforeEach(() => sim.clearRequests());

const USER = [{ role: 'user', content: 'hi' }];

/** What each provider receives for `{model, messages: [{role: user, content: hi}]}` and nothing else. */
function baseBody(t: Target): Record<string, unknown> {
  const m = TARGETS[t].model;
  switch (t) {
    case 'openai':
    case 'compat':
      return { model: m, messages: USER };
    case 'azure':
      return { messages: USER }; // the deployment is in the URL
    case 'anthropic':
      return { model: m, max_tokens: 4096, messages: USER };
    case 'gemini':
    case 'gemini3':
    case 'vertex':
      return { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] };
    case 'bedrock':
      return { messages: [{ role: 'user', content: [{ text: 'hi' }] }] };
    case 'vertexClaude': // the model is in the URL
      return { anthropic_version: 'vertex-2023-10-16', max_tokens: 4096, messages: USER };
    case 'cohere':
      return { model: m, messages: USER };
  }
}

const WEATHER = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Weather for a city.',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
} as const;
const ANTHROPIC_WEATHER = {
  name: 'get_weather',
  description: 'Weather for a city.',
  input_schema: WEATHER.function.parameters,
};
const BEDROCK_WEATHER = {
  toolSpec: {
    name: 'get_weather',
    description: 'Weather for a city.',
    inputSchema: { json: WEATHER.function.parameters },
  },
};
const COHERE_WEATHER = WEATHER;
const GEMINI_WEATHER = [
  {
    functionDeclarations: [
      {
        name: 'get_weather',
        description: 'Weather for a city.',
        parametersJsonSchema: WEATHER.function.parameters,
      },
    ],
  },
];

/** `body`: the upstream body is baseBody(target) plus these fields, exactly. `refused`: the slot refuses. */
type Outcome = { body: Record<string, unknown> } | { refused: string };
const sent = (body: Record<string, unknown> = {}): Outcome => ({ body });
const refused = (param: string): Outcome => ({ refused: param });
const sameForOpenAIs = (body: Record<string, unknown>) => ({
  openai: sent(body),
  azure: sent(body),
  compat: sent(body),
});
const gen = (config: Record<string, unknown>): Outcome => sent({ generationConfig: config });
const inference = (config: Record<string, unknown>): Outcome => sent({ inferenceConfig: config });
/** Gemini on Vertex AI takes the Gemini API's body. */
const geminis = (o: Outcome) => ({ gemini: o, vertex: o });
/** Claude on Vertex AI takes Anthropic's body (without the model). */
const claudes = (o: Outcome) => ({ anthropic: o, vertexClaude: o });

interface Case {
  name: string;
  params: Record<string, unknown>;
  /** The compatible parameters this case shows passed, mapped or refused. */
  covers: string[];
  expect: Partial<Record<Target, Outcome>>;
}

const CASES: Case[] = [
  {
    name: 'model and messages alone',
    params: {},
    covers: ['model', 'messages'],
    expect: {
      ...sameForOpenAIs({}),
      ...claudes(sent()),
      ...geminis(sent()),
      bedrock: sent(),
      cohere: sent(),
    },
  },
  {
    name: 'temperature',
    params: { temperature: 0.3 },
    covers: ['temperature'],
    expect: {
      ...sameForOpenAIs({ temperature: 0.3 }),
      ...claudes(sent({ temperature: 0.3 })),
      ...geminis(gen({ temperature: 0.3 })),
      bedrock: inference({ temperature: 0.3 }),
      cohere: sent({ temperature: 0.3 }),
    },
  },
  {
    name: 'top_p',
    params: { top_p: 0.9 },
    covers: ['top_p'],
    expect: {
      ...sameForOpenAIs({ top_p: 0.9 }),
      ...claudes(sent({ top_p: 0.9 })),
      ...geminis(gen({ topP: 0.9 })),
      bedrock: inference({ topP: 0.9 }),
      cohere: sent({ p: 0.9 }),
    },
  },
  {
    name: 'max_tokens',
    params: { max_tokens: 50 },
    covers: ['max_tokens'],
    expect: {
      ...sameForOpenAIs({ max_tokens: 50 }),
      ...claudes(sent({ max_tokens: 50 })),
      ...geminis(gen({ maxOutputTokens: 50 })),
      bedrock: inference({ maxTokens: 50 }),
      cohere: sent({ max_tokens: 50 }),
    },
  },
  {
    name: 'max_completion_tokens (sent as max_tokens to non-reasoning models)',
    params: { max_completion_tokens: 60 },
    covers: ['max_completion_tokens'],
    expect: {
      ...sameForOpenAIs({ max_tokens: 60 }),
      ...claudes(sent({ max_tokens: 60 })),
      ...geminis(gen({ maxOutputTokens: 60 })),
      bedrock: inference({ maxTokens: 60 }),
      cohere: sent({ max_tokens: 60 }),
    },
  },
  {
    name: 'stop',
    params: { stop: 'END' },
    covers: ['stop'],
    expect: {
      ...sameForOpenAIs({ stop: ['END'] }),
      ...claudes(sent({ stop_sequences: ['END'] })),
      ...geminis(gen({ stopSequences: ['END'] })),
      bedrock: inference({ stopSequences: ['END'] }),
      cohere: sent({ stop_sequences: ['END'] }),
    },
  },
  {
    name: 'user',
    params: { user: 'end-user-1' },
    covers: ['user'],
    expect: {
      ...sameForOpenAIs({ user: 'end-user-1' }),
      ...claudes(sent({ metadata: { user_id: 'end-user-1' } })),
      // Gemini and Cohere have no end-user field; `user` is advisory (abuse monitoring), so it is not refused.
      ...geminis(sent()),
      cohere: sent(),
      // Bedrock's invocation logs can be filtered by requestMetadata.
      bedrock: sent({ requestMetadata: { user: 'end-user-1' } }),
    },
  },
  {
    name: 'seed',
    params: { seed: 7 },
    covers: ['seed'],
    expect: {
      ...sameForOpenAIs({ seed: 7 }),
      ...claudes(refused('seed')),
      ...geminis(gen({ seed: 7 })),
      bedrock: refused('seed'),
      cohere: sent({ seed: 7 }),
    },
  },
  {
    name: 'presence_penalty',
    params: { presence_penalty: 0.5 },
    covers: ['presence_penalty'],
    expect: {
      ...sameForOpenAIs({ presence_penalty: 0.5 }),
      ...claudes(refused('presence_penalty')),
      ...geminis(gen({ presencePenalty: 0.5 })),
      bedrock: refused('presence_penalty'),
      cohere: sent({ presence_penalty: 0.5 }),
    },
  },
  {
    name: 'presence_penalty 0 (no penalty: honoured by sending nothing where there is no such field)',
    params: { presence_penalty: 0 },
    covers: ['presence_penalty'],
    expect: {
      ...sameForOpenAIs({ presence_penalty: 0 }),
      ...claudes(sent()),
      ...geminis(gen({ presencePenalty: 0 })),
      bedrock: sent(),
      cohere: sent({ presence_penalty: 0 }),
    },
  },
  {
    name: 'frequency_penalty',
    params: { frequency_penalty: -0.5 },
    covers: ['frequency_penalty'],
    expect: {
      ...sameForOpenAIs({ frequency_penalty: -0.5 }),
      ...claudes(refused('frequency_penalty')),
      ...geminis(gen({ frequencyPenalty: -0.5 })),
      bedrock: refused('frequency_penalty'),
      // Cohere's penalties run from 0 to 1.
      cohere: refused('frequency_penalty'),
    },
  },
  {
    name: 'logit_bias',
    params: { logit_bias: { '50256': -100 } },
    covers: ['logit_bias'],
    expect: {
      ...sameForOpenAIs({ logit_bias: { '50256': -100 } }),
      ...claudes(refused('logit_bias')),
      ...geminis(refused('logit_bias')),
      bedrock: refused('logit_bias'),
      cohere: refused('logit_bias'),
    },
  },
  {
    name: 'tools and tool_choice',
    params: { tools: [WEATHER], tool_choice: 'required' },
    covers: ['tools', 'tool_choice'],
    expect: {
      ...sameForOpenAIs({ tools: [WEATHER], tool_choice: 'required' }),
      ...claudes(sent({ tools: [ANTHROPIC_WEATHER], tool_choice: { type: 'any' } })),
      ...geminis(sent({ tools: GEMINI_WEATHER, toolConfig: { functionCallingConfig: { mode: 'ANY' } } })),
      bedrock: sent({ toolConfig: { tools: [BEDROCK_WEATHER], toolChoice: { any: {} } } }),
      cohere: sent({ tools: [COHERE_WEATHER], tool_choice: 'REQUIRED' }),
    },
  },
  {
    name: 'parallel_tool_calls: false with tools',
    params: { tools: [WEATHER], parallel_tool_calls: false },
    covers: ['parallel_tool_calls'],
    expect: {
      ...sameForOpenAIs({ tools: [WEATHER], parallel_tool_calls: false }),
      ...claudes(
        sent({
          tools: [ANTHROPIC_WEATHER],
          tool_choice: { type: 'auto', disable_parallel_tool_use: true },
        }),
      ),
      ...geminis(refused('parallel_tool_calls')),
      bedrock: refused('parallel_tool_calls'),
      cohere: refused('parallel_tool_calls'),
    },
  },
  {
    name: 'parallel_tool_calls without tools (asks for nothing; OpenAI refuses it alone)',
    params: { parallel_tool_calls: false },
    covers: ['parallel_tool_calls'],
    expect: {
      ...sameForOpenAIs({}),
      ...claudes(sent()),
      ...geminis(sent()),
      bedrock: sent(),
      cohere: sent(),
    },
  },
  {
    name: 'reasoning_effort low',
    params: { reasoning_effort: 'low' },
    covers: ['reasoning_effort'],
    expect: {
      ...sameForOpenAIs({ reasoning_effort: 'low' }),
      ...claudes(refused('reasoning_effort')),
      ...geminis(gen({ thinkingConfig: { thinkingBudget: 1024 } })),
      bedrock: refused('reasoning_effort'),
      cohere: refused('reasoning_effort'),
      gemini3: gen({ thinkingConfig: { thinkingLevel: 'low' } }),
    },
  },
  {
    name: 'reasoning_effort high',
    params: { reasoning_effort: 'high' },
    covers: ['reasoning_effort'],
    expect: {
      ...sameForOpenAIs({ reasoning_effort: 'high' }),
      ...claudes(refused('reasoning_effort')),
      ...geminis(gen({ thinkingConfig: { thinkingBudget: 24576 } })),
      bedrock: refused('reasoning_effort'),
      cohere: refused('reasoning_effort'),
      gemini3: gen({ thinkingConfig: { thinkingLevel: 'high' } }),
    },
  },
  {
    name: 'reasoning_effort none',
    params: { reasoning_effort: 'none' },
    covers: ['reasoning_effort'],
    expect: {
      ...sameForOpenAIs({ reasoning_effort: 'none' }),
      ...claudes(sent()), // no extended thinking is Claude's default
      ...geminis(gen({ thinkingConfig: { thinkingBudget: 0 } })),
      bedrock: sent(),
      cohere: sent(),
      gemini3: refused('reasoning_effort'), // Gemini 3 cannot switch thinking off
    },
  },
  {
    name: 'reasoning_effort minimal',
    params: { reasoning_effort: 'minimal' },
    covers: ['reasoning_effort'],
    expect: {
      ...sameForOpenAIs({ reasoning_effort: 'minimal' }),
      ...claudes(refused('reasoning_effort')),
      ...geminis(refused('reasoning_effort')),
      bedrock: refused('reasoning_effort'),
      cohere: refused('reasoning_effort'),
      gemini3: gen({ thinkingConfig: { thinkingLevel: 'minimal' } }),
    },
  },
  {
    name: 'service_tier flex',
    params: { service_tier: 'flex' },
    covers: ['service_tier'],
    expect: {
      openai: sent({ service_tier: 'flex' }),
      azure: sent({ service_tier: 'flex' }),
      compat: refused('service_tier'),
      ...claudes(refused('service_tier')),
      ...geminis(refused('service_tier')),
      bedrock: sent({ serviceTier: { type: 'flex' } }),
      cohere: refused('service_tier'),
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
      ...claudes(sent({ service_tier: 'standard_only' })),
      ...geminis(sent()),
      bedrock: sent({ serviceTier: { type: 'default' } }),
      cohere: sent(),
    },
  },
  {
    name: 'service_tier auto',
    params: { service_tier: 'auto' },
    covers: ['service_tier'],
    expect: {
      openai: sent({ service_tier: 'auto' }),
      azure: sent({ service_tier: 'auto' }),
      compat: sent(),
      ...claudes(sent({ service_tier: 'auto' })),
      ...geminis(sent()),
      bedrock: sent(),
      cohere: sent(),
    },
  },
  {
    name: 'store with metadata (metadata labels the stored completion)',
    params: { store: true, metadata: { team: 'search' } },
    covers: ['store', 'metadata'],
    expect: {
      openai: sent({ store: true, metadata: { team: 'search' } }),
      azure: sent({ store: true, metadata: { team: 'search' } }),
      compat: refused('store'),
      ...claudes(refused('store')),
      ...geminis(refused('store')),
      bedrock: refused('store'),
      cohere: refused('store'),
    },
  },
  {
    name: 'metadata without store (read by the gateway for cache fields; OpenAI refuses it alone)',
    params: { metadata: { team: 'search' } },
    covers: ['metadata'],
    expect: {
      ...sameForOpenAIs({}),
      ...claudes(sent()),
      ...geminis(sent()),
      bedrock: sent(),
      cohere: sent(),
    },
  },
  {
    name: 'store: false',
    params: { store: false },
    covers: ['store'],
    expect: {
      openai: sent({ store: false }),
      azure: sent({ store: false }),
      compat: sent(),
      ...claudes(sent()),
      ...geminis(sent()),
      bedrock: sent(),
      cohere: sent(),
    },
  },
  {
    name: 'n: 1',
    params: { n: 1 },
    covers: ['n'],
    expect: {
      ...sameForOpenAIs({}),
      ...claudes(sent()),
      ...geminis(sent()),
      bedrock: sent(),
      cohere: sent(),
    },
  },
  {
    name: 'response_format text (the default)',
    params: { response_format: { type: 'text' } },
    covers: ['response_format'],
    expect: {
      ...sameForOpenAIs({}),
      ...claudes(sent()),
      ...geminis(sent()),
      bedrock: sent(),
      cohere: sent(),
    },
  },
  {
    name: 'null is "not set"',
    params: {
      seed: null,
      logit_bias: null,
      reasoning_effort: null,
      store: null,
      logprobs: null,
      temperature: null,
      top_p: null,
      max_tokens: null,
      max_completion_tokens: null,
      stop: null,
      n: null,
      stream: null,
    },
    covers: [],
    expect: {
      ...sameForOpenAIs({}),
      ...claudes(sent()),
      ...geminis(sent()),
      bedrock: sent(),
      cohere: sent(),
    },
  },
];

/** Tested below, outside the table: streaming and sessions. */
const COVERED_BELOW = ['stream', 'stream_options', 'session_id'];

interface ErrorBody {
  error: { message: string; type: string; code: string; param: string | null };
}

async function chat(target: Target, params: Record<string, unknown>) {
  return rawJson(gw.url, '/v1/chat/completions', {
    body: { model: TARGETS[target].workflow, messages: USER, ...params },
  });
}

describe('every parameter of the compatible chat schema is accounted for', () => {
  const mapped = new Set<string>(MAPPED_CHAT_PARAMS);
  const unsupported = new Set<string>(UNSUPPORTED_CHAT_PARAMS);

  it('each schema key is either mapped or refused, never both', () => {
    const keys = Object.keys(compatChatBody.shape);
    expect(keys.filter((k) => !mapped.has(k) && !unsupported.has(k))).toEqual([]);
    expect(keys.filter((k) => mapped.has(k) && unsupported.has(k))).toEqual([]);
    // …and neither list names a parameter the schema does not have.
    expect([...mapped, ...unsupported].filter((k) => !keys.includes(k))).toEqual([]);
  });

  it('each case states the outcome on every provider type', () => {
    expect(CASES.filter((c) => MAIN.some((t) => !c.expect[t])).map((c) => c.name)).toEqual([]);
  });

  it('each mapped parameter has an upstream expectation in this file', () => {
    const covered = new Set([...CASES.flatMap((c) => c.covers), ...COVERED_BELOW]);
    expect(MAPPED_CHAT_PARAMS.filter((p) => !covered.has(p))).toEqual([]);
  });
});

describe.each(CASES)('$name', (c) => {
  it.each(Object.keys(c.expect) as Target[])('%s', async (target) => {
    const want = c.expect[target]!;
    const res = await chat(target, c.params);
    const upstream = sim.requests().filter((r) => r.provider === TARGETS[target].sim);
    if ('body' in want) {
      expect(res.status, res.text).toBe(200);
      expect(upstream).toHaveLength(1);
      expect(upstream[0]!.body).toEqual({ ...baseBody(target), ...want.body });
    } else {
      // The only slot cannot honour it: nothing reaches the provider and the client hears what to change.
      expect(upstream).toEqual([]);
      expect(res.status).toBe(400);
      const err = (res.json as ErrorBody).error;
      expect(err).toMatchObject({
        code: 'unsupported_parameter',
        param: want.refused,
        type: 'invalid_request_error',
      });
      expect(err.message).toContain(`"${want.refused}"`);
    }
  });
});

describe('refused by the surface: 400 unsupported_parameter, nothing sent upstream', () => {
  const SAMPLES: Record<(typeof UNSUPPORTED_CHAT_PARAMS)[number], unknown> = {
    functions: [{ name: 'f', parameters: { type: 'object' } }],
    function_call: 'auto',
    logprobs: true,
    top_logprobs: 2,
    modalities: ['text', 'audio'],
    audio: { voice: 'alloy', format: 'mp3' },
    prediction: { type: 'content', content: 'draft' },
    web_search_options: {},
    verbosity: 'low',
    prompt_cache_key: 'k-1',
    prompt_cache_retention: '24h',
    safety_identifier: 'u-hash',
  };
  const cases: [string, Record<string, unknown>][] = [
    ...UNSUPPORTED_CHAT_PARAMS.map((p): [string, Record<string, unknown>] => [p, { [p]: SAMPLES[p] }]),
    ['n', { n: 2 }],
    ['top_k', { top_k: 40 }], // a parameter the schema does not know is refused, not stripped
    ['stream_options.include_obfuscation', { stream: true, stream_options: { include_obfuscation: false } }],
  ];

  it.each(cases)('%s', async (param, params) => {
    const res = await chat('openai', params);
    expect(res.status).toBe(400);
    const err = (res.json as ErrorBody).error;
    expect(err).toMatchObject({ code: 'unsupported_parameter', param, type: 'invalid_request_error' });
    expect(sim.requests()).toEqual([]);
  });

  it('false and null ask for nothing and pass', async () => {
    const res = await chat('openai', { logprobs: false, functions: null, top_k: null });
    expect(res.status, res.text).toBe(200);
    expect(sim.requests().map((r) => r.body)).toEqual([baseBody('openai')]);
  });
});

describe('failover: a slot that cannot honour a parameter is passed over', () => {
  const sdk = () => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: API_KEY, maxRetries: 0, timeout: 15_000 });

  it('seed skips Anthropic and is served by the OpenAI backup', async () => {
    const { data, response } = await sdk()
      .chat.completions.create({
        model: 'claude-then-openai',
        messages: [{ role: 'user', content: 'hi' }],
        seed: 7,
      })
      .withResponse();
    expect(response.headers.get('x-service-used-provider')).toBe('oai');
    expect(data.choices[0]?.message.content).toContain('Simulated openai/gpt-4o-mini');
    expect(sim.requests().map((r) => [r.provider, r.body])).toEqual([
      ['openai', { ...baseBody('openai'), seed: 7 }],
    ]);
  });

  it('streamed: the same, before any byte reaches the client', async () => {
    const stream = await sdk().chat.completions.create({
      model: 'claude-then-openai',
      messages: [{ role: 'user', content: 'hi' }],
      logit_bias: { '50256': -100 },
      stream: true,
    });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toContain('Simulated openai/gpt-4o-mini');
    expect(sim.requests().map((r) => r.provider)).toEqual(['openai']);
    expect((sim.requests()[0]!.body as Record<string, unknown>).logit_bias).toEqual({ '50256': -100 });
  });

  it('parameters every slot takes stay on the primary', async () => {
    const { response } = await sdk()
      .chat.completions.create({
        model: 'claude-then-openai',
        messages: [{ role: 'user', content: 'hi' }],
        stop: ['END'],
        service_tier: 'auto',
      })
      .withResponse();
    expect(response.headers.get('x-service-used-provider')).toBe('claude');
    expect(sim.requests().map((r) => [r.provider, r.body])).toEqual([
      ['anthropic', { ...baseBody('anthropic'), stop_sequences: ['END'], service_tier: 'auto' }],
    ]);
  });
});

describe('stream and stream_options', () => {
  const sdk = () => new OpenAI({ baseURL: `${gw.url}/v1`, apiKey: API_KEY, maxRetries: 0, timeout: 15_000 });

  async function streamed(target: Target, includeUsage: boolean | undefined) {
    const stream = await sdk().chat.completions.create({
      model: TARGETS[target].workflow,
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
      ...(includeUsage === undefined ? {} : { stream_options: { include_usage: includeUsage } }),
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    return chunks;
  }

  it('include_usage decides the client-visible usage chunk; OpenAI is always asked for usage', async () => {
    const withUsage = await streamed('openai', true);
    const last = withUsage.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage?.total_tokens).toBeGreaterThan(0);
    const without = await streamed('openai', undefined);
    expect(without.filter((c) => c.usage)).toEqual([]);
    const off = await streamed('openai', false);
    expect(off.filter((c) => c.usage)).toEqual([]);
    const bodies = sim.requests().map((r) => r.body);
    const upstream = { ...baseBody('openai'), stream: true, stream_options: { include_usage: true } };
    expect(bodies).toEqual([upstream, upstream, upstream]);
  });

  it('servers not known to take stream_options are not sent it', async () => {
    const chunks = await streamed('compat', true);
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('stop');
    expect(sim.requests().map((r) => r.body)).toEqual([{ ...baseBody('compat'), stream: true }]);
  });

  it('Anthropic and Gemini stream with their own usage', async () => {
    expect((await streamed('anthropic', true)).at(-1)?.usage?.total_tokens).toBeGreaterThan(0);
    expect((await streamed('gemini', true)).at(-1)?.usage?.total_tokens).toBeGreaterThan(0);
    const [a, g] = sim.requests();
    expect(a!.body).toEqual({ ...baseBody('anthropic'), stream: true });
    expect(g!.body).toEqual(baseBody('gemini'));
    expect(g!.path).toContain(':streamGenerateContent');
  });

  it('Bedrock, Vertex AI (Gemini and Claude) and Cohere stream with their own usage', async () => {
    for (const t of ['bedrock', 'vertex', 'vertexClaude', 'cohere'] as const)
      expect((await streamed(t, true)).at(-1)?.usage?.total_tokens, t).toBeGreaterThan(0);
    const [b, v, c, co] = sim.requests().filter((r) => r.provider !== 'google-auth');
    expect([b!.path, b!.body]).toEqual([
      '/model/anthropic.claude-3-5-haiku-20241022-v1%3A0/converse-stream',
      baseBody('bedrock'),
    ]);
    expect([v!.path, v!.body]).toEqual([
      '/v1/projects/sim-project/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse',
      baseBody('vertex'),
    ]);
    expect([c!.path, c!.body]).toEqual([
      '/v1/projects/sim-project/locations/us-central1/publishers/anthropic/models/claude-haiku-4-5%4020251001:streamRawPredict',
      { ...baseBody('vertexClaude'), stream: true },
    ]);
    expect(co!.body).toEqual({ ...baseBody('cohere'), stream: true });
  });
});

describe('session_id', () => {
  it('is refused, not ignored, by a workflow without session memory (sessions: test/sessions)', async () => {
    const res = await chat('openai', { session_id: '00000000-0000-4000-8000-000000000000' });
    expect(res.status).toBe(400);
    expect((res.json as ErrorBody).error).toMatchObject({ code: 'invalid_request', param: 'session_id' });
    expect(sim.requests()).toEqual([]);
  });
});

describe('the native surface takes the same controls', () => {
  it('POST /v1/ai passes them to the provider', async () => {
    const res = await rawJson(gw.url, '/v1/ai', {
      body: {
        workflow: 'p-openai',
        messages: USER,
        seed: 3,
        presence_penalty: 0.1,
        frequency_penalty: 0.2,
        logit_bias: { '1': 5 },
        reasoning_effort: 'medium',
        service_tier: 'flex',
        store: true,
        metadata: { team: 'a' },
        tools: [WEATHER],
        parallel_tool_calls: false,
      },
    });
    expect(res.status, res.text).toBe(200);
    expect(sim.requests().map((r) => r.body)).toEqual([
      {
        ...baseBody('openai'),
        seed: 3,
        presence_penalty: 0.1,
        frequency_penalty: 0.2,
        logit_bias: { '1': 5 },
        reasoning_effort: 'medium',
        service_tier: 'flex',
        store: true,
        metadata: { team: 'a' },
        tools: [WEATHER],
        parallel_tool_calls: false,
      },
    ]);
  });
});

describe('OpenAI-compatible dialects (the servers are recognised by host, so built without a socket)', () => {
  const target = (baseURL: string): UpstreamTarget => ({
    providerName: 'x',
    type: 'openai-compatible',
    baseURL,
    apiKey: 'k',
    model: 'm',
    streaming: true,
    timeouts: { connectMs: 1000, firstByteMs: 1000, totalMs: 1000 },
  });
  const req = (extra: Partial<ChatRequest>): ChatRequest => ({
    kind: 'chat',
    messages: [{ role: 'user', content: 'hi' }],
    ...extra,
  });
  const body = (baseURL: string, extra: Partial<ChatRequest>) =>
    JSON.parse(buildOpenAIBody(req(extra), 'm', compatDialect(target(baseURL)), false) as string);
  const refusal = (baseURL: string, extra: Partial<ChatRequest>): UpstreamError => {
    try {
      body(baseURL, extra);
    } catch (err) {
      if (err instanceof UpstreamError) return err;
      throw err;
    }
    throw new Error('expected a refusal');
  };

  it('Mistral spells seed random_seed', () => {
    expect(body('https://api.mistral.ai/v1', { seed: 9, presence_penalty: 0.4 })).toEqual({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      random_seed: 9,
      presence_penalty: 0.4,
    });
  });

  it('Groq refuses logit_bias (its 400) and penalties it accepts but does not apply', () => {
    const err = refusal('https://api.groq.com/openai/v1', { logit_bias: { '1': 1 } });
    expect(err.code).toBe('UPSTREAM_UNSUPPORTED');
    expect(err.message).toContain('"logit_bias"');
    expect(refusal('https://api.groq.com/openai/v1', { presence_penalty: 0.5 }).message).toContain('groq');
    expect(body('https://api.groq.com/openai/v1', { presence_penalty: 0, service_tier: 'flex' })).toEqual({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      service_tier: 'flex',
    });
  });

  it('DeepSeek refuses seed; Ollama takes seed and reasoning_effort but not logit_bias', () => {
    expect(refusal('https://api.deepseek.com/v1', { seed: 1 }).code).toBe('UPSTREAM_UNSUPPORTED');
    expect(body('http://localhost:11434/v1', { seed: 1, reasoning_effort: 'low' })).toMatchObject({
      seed: 1,
      reasoning_effort: 'low',
    });
    expect(refusal('http://localhost:11434/v1', { logit_bias: { '1': 1 } }).code).toBe(
      'UPSTREAM_UNSUPPORTED',
    );
  });
});
