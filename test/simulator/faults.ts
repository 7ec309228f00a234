/**
 * Fault selection: explicit rules (in-process API or POST /_sim/faults) plus the model-name convention,
 * so out-of-process callers (a gateway under test, a benchmark) can ask for a fault by model name alone.
 *
 * Model-name tokens (anywhere in the model / deployment name, separated from neighbours by a
 * non-alphanumeric character, e.g. `fail-503` or `gpt-4o-fail-503`; several may be combined,
 * e.g. `slow-200-cut-3`):
 *   fail-NNN      answer status NNN with the provider's error body
 *   retry-N       with fail-NNN: `retry-after: N` header
 *   slow-N        wait N ms before the headers
 *   ttfb-N        flush headers, then wait N ms before the first body byte
 *   cut-N         destroy the socket after N stream events (non-stream: after half the body)
 *   hang          never answer
 *   malformed     invalid JSON (non-stream body, or one stream event)
 *   deep-N        a valid JSON body with an extra field nested N arrays deep (non-stream)
 *   reset         reset the connection instead of answering
 *   chunks-N      stream N content chunks
 *   interval-N    wait N ms between stream chunks
 *   badcrc        (Bedrock streams) one event-stream frame with a wrong CRC
 */
import type { FaultRule, ProviderName, ScriptedToolCall } from './types.ts';

export interface ResolvedFault {
  status?: number;
  retryAfter?: number;
  delayMs?: number;
  firstByteDelayMs?: number;
  hang?: boolean;
  cutAfterChunks?: number;
  malformed?: 'body' | 'chunk';
  deepJson?: number;
  resetConnection?: boolean;
  streamChunks?: number;
  chunkIntervalMs?: number;
  corruptCrc?: boolean;
  promptTokens?: number;
  cachedTokens?: number;
  cacheWriteTokens?: number;
  toolCall?: ScriptedToolCall;
}

interface StoredRule {
  rule: FaultRule;
  remaining: number;
}

const NUMERIC_TOKENS: ReadonlyArray<[RegExp, keyof ResolvedFault]> = [
  [/(?:^|[^a-z0-9])fail-(\d{3})(?![0-9])/i, 'status'],
  [/(?:^|[^a-z0-9])retry-(\d+)(?![0-9])/i, 'retryAfter'],
  [/(?:^|[^a-z0-9])slow-(\d+)(?![0-9])/i, 'delayMs'],
  [/(?:^|[^a-z0-9])ttfb-(\d+)(?![0-9])/i, 'firstByteDelayMs'],
  [/(?:^|[^a-z0-9])cut-(\d+)(?![0-9])/i, 'cutAfterChunks'],
  [/(?:^|[^a-z0-9])chunks-(\d+)(?![0-9])/i, 'streamChunks'],
  [/(?:^|[^a-z0-9])interval-(\d+)(?![0-9])/i, 'chunkIntervalMs'],
  [/(?:^|[^a-z0-9])deep-(\d+)(?![0-9])/i, 'deepJson'],
];

function hasWord(model: string, word: string): boolean {
  return new RegExp(`(?:^|[^a-z0-9])${word}(?![a-z0-9])`, 'i').test(model);
}

/** Faults requested by the model name; empty object when the name carries none. */
export function faultFromModel(model: string): ResolvedFault {
  const fault: ResolvedFault = {};
  if (!model) return fault;
  for (const [re, key] of NUMERIC_TOKENS) {
    const m = re.exec(model);
    if (m) (fault as Record<string, number>)[key] = Number(m[1]);
  }
  if (hasWord(model, 'hang')) fault.hang = true;
  if (hasWord(model, 'malformed')) fault.malformed = 'body';
  if (hasWord(model, 'reset')) fault.resetConnection = true;
  if (hasWord(model, 'badcrc')) fault.corruptCrc = true;
  return fault;
}

export class FaultStore {
  #rules: StoredRule[] = [];

  add(rule: FaultRule): void {
    this.#rules.push({ rule, remaining: rule.times ?? Number.POSITIVE_INFINITY });
  }

  clear(): void {
    this.#rules = [];
  }

  /** First matching rule with uses left (consuming one use), merged with the model-name faults. */
  resolve(provider: ProviderName, model: string, pathname: string): ResolvedFault {
    let fromRule: ResolvedFault = {};
    for (const stored of this.#rules) {
      if (stored.remaining <= 0 || !matches(stored.rule, provider, model, pathname)) continue;
      stored.remaining--;
      const { match: _m, times: _t, ...fault } = stored.rule;
      fromRule = fault;
      break;
    }
    this.#rules = this.#rules.filter((r) => r.remaining > 0);
    return { ...fromRule, ...faultFromModel(model) };
  }
}

function matches(rule: FaultRule, provider: ProviderName, model: string, pathname: string): boolean {
  const m = rule.match;
  if (!m) return true;
  if (m.provider !== undefined && m.provider !== provider) return false;
  if (m.model !== undefined && m.model !== model) return false;
  if (m.path !== undefined && !pathname.includes(m.path)) return false;
  return true;
}
