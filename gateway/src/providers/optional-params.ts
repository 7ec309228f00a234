/**
 * The optional chat/completion parameters that not every provider takes. Each request translator
 * passes, renames or refuses every one of them; none is left out of the upstream body unremarked.
 */
import { type UpstreamError, unsupported } from '../upstream/errors.ts';
import type { ChatRequest, CompletionRequest } from './types.ts';

export const OPTIONAL_PARAMS = [
  'seed',
  'presence_penalty',
  'frequency_penalty',
  'logit_bias',
  'parallel_tool_calls',
  'reasoning_effort',
  'service_tier',
  'store',
  'metadata',
] as const;
export type OptionalParam = (typeof OPTIONAL_PARAMS)[number];

/**
 * Whether a value asks for anything beyond what every provider does anyway. A provider that lacks
 * the parameter honours a neutral value by sending nothing (a zero penalty, an empty bias, parallel
 * tool calls allowed, nothing stored, the automatic tier); any other value it must refuse.
 */
export function inEffect(param: OptionalParam, value: unknown): boolean {
  switch (param) {
    case 'presence_penalty':
    case 'frequency_penalty':
      return value !== 0;
    case 'logit_bias':
    case 'metadata':
      return typeof value === 'object' && value !== null && Object.keys(value).length > 0;
    case 'parallel_tool_calls':
      return value === false;
    case 'store':
      return value === true;
    case 'service_tier':
      return value !== 'auto';
    default:
      return true;
  }
}

/** The optional parameters of a request that are set, in OPTIONAL_PARAMS order. */
export function setParams(req: ChatRequest | CompletionRequest): [OptionalParam, unknown][] {
  const out: [OptionalParam, unknown][] = [];
  const r = req as Partial<Record<OptionalParam, unknown>>;
  for (const p of OPTIONAL_PARAMS) if (r[p] !== undefined) out.push([p, r[p]]);
  return out;
}

/**
 * The UPSTREAM_UNSUPPORTED refusal of one parameter: the failover chain moves on to a slot that can
 * honour it. The message names the parameter the way the client spelled it.
 */
export function refuseParam(provider: string, param: string, why: string): UpstreamError {
  return unsupported(`${provider} cannot honour the parameter "${param}": ${why}`, param);
}
