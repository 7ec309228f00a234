import { usdToMicros } from '#contract';
import { ceilingUsage, costMicros } from '../domain/cost.ts';
import type { CanonicalRequest, ChatMessage } from '../providers/types.ts';
import type { RuntimeProject, RuntimeSlot } from '../snapshot/runtime.ts';
import {
  ceilingMessageTokens,
  ceilingTextTokens,
  countMessageTokens,
  countTextTokens,
} from '../tokens/count.ts';

/** Output assumed for a request without max_tokens whose model declares no maxOutputTokens. */
export const DEFAULT_OUTPUT_TOKENS = 4096;
/** Audio of unknown length is assumed to be 32 kbit/s compressed: 4,000 bytes a second. */
const AUDIO_BYTES_PER_SECOND = 4000;

export interface Estimate {
  /**
   * Tokens counted against token rate limits at admission: the prompt plus `max_tokens` when the
   * request sets it (the model's default output cap would make every request look huge; the real
   * count corrects the estimate when the answer is in).
   */
  tokens: number;
  /** µUSD at list price of the slot's model; null when its pricing does not cover the request. */
  micros: number | null;
}

function maxOutput(project: RuntimeProject, slot: RuntimeSlot): number {
  return (
    project.providers.get(slot.provider)?.config.models[slot.model]?.maxOutputTokens ?? DEFAULT_OUTPUT_TOKENS
  );
}

/** Counts a request's input tokens: the estimate (rate limits) or the ceiling (spend caps). */
interface Counter {
  messages(m: ChatMessage[]): number;
  text(t: string): number;
}
const ESTIMATE: Counter = { messages: countMessageTokens, text: countTextTokens };
const CEILING: Counter = { messages: ceilingMessageTokens, text: ceilingTextTokens };

function inputOf(req: CanonicalRequest, count: Counter): number {
  switch (req.kind) {
    case 'chat':
      return count.messages(req.messages);
    case 'completion':
    case 'image':
      return count.text(req.prompt);
    case 'embedding':
      return typeof req.input === 'string'
        ? count.text(req.input)
        : req.input.reduce((n, s) => n + count.text(s), 0);
    case 'speech':
      return count.text(req.input);
    case 'transcription':
      return 0;
  }
}

/**
 * A stream's output allowance on a slot: what its reservation assumed, and the price of one more
 * such block. Undefined when the request bounds its own output (max_tokens), so it cannot outgrow it.
 */
export function streamBlock(
  req: CanonicalRequest,
  project: RuntimeProject,
  slot: RuntimeSlot,
): { tokens: number; micros: number } | undefined {
  if ((req.kind !== 'chat' && req.kind !== 'completion') || req.max_tokens !== undefined) return undefined;
  const tokens = maxOutput(project, slot);
  const micros = costMicros(
    { usage: { prompt_tokens: 0, completion_tokens: tokens, total_tokens: tokens } },
    slot.pricing,
  );
  return micros === null ? undefined : { tokens, micros };
}

/**
 * What a request may cost on one slot, before it is sent (docs/api.md, "Spend caps and rate limits"):
 * its input at its ceiling (UTF-8 bytes: no tokenizer counts more, so a request never costs more
 * input than it reserved) plus `max_tokens`, else the model's maxOutputTokens, at list price; images
 * at their price each; audio by its estimated length. The same cost function prices the real usage
 * afterwards. Token limits take the estimate instead (tokens/count.ts), corrected by the real usage.
 */
export function estimate(req: CanonicalRequest, project: RuntimeProject, slot: RuntimeSlot): Estimate {
  const chatLike = req.kind === 'chat' || req.kind === 'completion';
  const asked = chatLike ? (req.max_tokens ?? 0) : 0;
  const output = chatLike ? (req.max_tokens ?? maxOutput(project, slot)) : 0;
  const input = inputOf(req, CEILING);
  const pricing = slot.pricing;
  let micros: number | null;
  if (req.kind === 'image')
    micros = pricing?.usdPerImage === undefined ? null : (req.n ?? 1) * usdToMicros(pricing.usdPerImage);
  else if (req.kind === 'transcription')
    micros =
      pricing?.usdPerAudioSecond === undefined
        ? null
        : Math.ceil(req.file.byteLength / AUDIO_BYTES_PER_SECOND) * usdToMicros(pricing.usdPerAudioSecond);
  else micros = costMicros({ usage: ceilingUsage(input, output, pricing) }, pricing);
  return { tokens: inputOf(req, ESTIMATE) + asked, micros };
}
