/**
 * Dialects of OpenAI-compatible servers, detected from the base URL. Conservative defaults for
 * unknown servers (vLLM, LM Studio, llama.cpp, proxies): no `stream_options`, `json_object`
 * instead of `json_schema`, `developer` sent as `system`. Per-target overrides:
 * `options.streamUsage`, `options.jsonSchema`.
 *
 * `params` lists the optional parameters each server documents (under its own name); the others
 * are refused when they ask for something, because these servers either reject unknown fields
 * (Mistral, Groq for logit_bias) or ignore them, which would drop them silently.
 */
import type { OpenAIDialect } from '../openai/request.ts';
import type { OptionalParam } from '../optional-params.ts';
import type { RequestKind, UpstreamTarget } from '../types.ts';
import { type CompatServer, compatServerOf } from './servers.ts';

type ParamNames = Readonly<Partial<Record<OptionalParam, string>>>;

interface CompatProfile {
  server: CompatServer;
  streamUsage: boolean;
  jsonSchema: boolean;
  /** Kinds this server certainly does not serve (refused locally instead of a round trip to a 404). */
  unsupported: readonly RequestKind[];
  params: ParamNames;
}

const same = (...names: OptionalParam[]): ParamNames => Object.fromEntries(names.map((n) => [n, n]));

const PROFILES: Record<CompatServer, CompatProfile> = {
  // Groq reports stream usage in `x_groq.usage` on the last chunk without being asked. It answers
  // logit_bias with a 400 and documents the penalties as accepted but not yet applied by any model.
  groq: {
    server: 'groq',
    streamUsage: false,
    jsonSchema: false,
    unsupported: ['embedding', 'image'],
    params: same('seed', 'parallel_tool_calls', 'reasoning_effort', 'service_tier'),
  },
  // Mistral always sends usage on the last chunk and rejects unknown fields such as stream_options.
  mistral: {
    server: 'mistral',
    streamUsage: false,
    jsonSchema: true,
    unsupported: ['image', 'speech'],
    params: { ...same('presence_penalty', 'frequency_penalty', 'parallel_tool_calls'), seed: 'random_seed' },
  },
  together: {
    server: 'together',
    streamUsage: false,
    jsonSchema: false,
    unsupported: [],
    params: same('seed', 'presence_penalty', 'frequency_penalty', 'logit_bias', 'reasoning_effort'),
  },
  deepseek: {
    server: 'deepseek',
    streamUsage: true,
    jsonSchema: false,
    unsupported: ['embedding', 'image', 'transcription', 'speech'],
    params: same('presence_penalty', 'frequency_penalty'),
  },
  xai: {
    server: 'xai',
    streamUsage: true,
    jsonSchema: true,
    unsupported: [],
    params: same('seed', 'presence_penalty', 'frequency_penalty', 'parallel_tool_calls', 'reasoning_effort'),
  },
  ollama: {
    server: 'ollama',
    streamUsage: true,
    jsonSchema: false,
    unsupported: ['image', 'transcription', 'speech'],
    params: same('seed', 'presence_penalty', 'frequency_penalty', 'reasoning_effort'),
  },
  // vLLM, llama.cpp and LM Studio take the sampling controls; none of them stores completions or
  // has service tiers.
  generic: {
    server: 'generic',
    streamUsage: false,
    jsonSchema: false,
    unsupported: [],
    params: same(
      'seed',
      'presence_penalty',
      'frequency_penalty',
      'logit_bias',
      'parallel_tool_calls',
      'reasoning_effort',
    ),
  },
};

const profileCache = new Map<string, CompatProfile>();

export function detectCompatServer(baseURL: string): CompatServer {
  return profileFor(baseURL).server;
}

function profileFor(baseURL: string): CompatProfile {
  let p = profileCache.get(baseURL);
  if (p !== undefined) return p;
  p = PROFILES[compatServerOf(baseURL)];
  if (profileCache.size > 10_000) profileCache.clear();
  profileCache.set(baseURL, p);
  return p;
}

const dialectCache = new Map<string, OpenAIDialect>();
const never = (): boolean => false;

export function compatDialect(target: UpstreamTarget): OpenAIDialect {
  const p = profileFor(target.baseURL);
  const streamUsage = target.options?.streamUsage ?? p.streamUsage;
  const jsonSchema = target.options?.jsonSchema ?? p.jsonSchema;
  const key = `${p.server}${streamUsage ? 1 : 0}${jsonSchema ? 1 : 0}`;
  let d = dialectCache.get(key);
  if (d === undefined) {
    d = {
      modelInBody: true,
      streamUsage,
      jsonSchema,
      developerRole: false,
      maxCompletionTokens: never,
      params: p.params,
      server: p.server === 'generic' ? 'openai-compatible server' : p.server,
    };
    dialectCache.set(key, d);
  }
  return d;
}

export function refuseKind(target: UpstreamTarget, kind: RequestKind): string | undefined {
  const p = profileFor(target.baseURL);
  return p.unsupported.includes(kind) ? `${p.server} does not serve ${kind} requests` : undefined;
}
