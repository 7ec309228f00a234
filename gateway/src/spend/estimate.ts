import { type ProviderType, usdToMicros } from '#contract';
import { costMicros } from '../domain/cost.ts';
import type { CanonicalRequest } from '../providers/types.ts';
import type { RuntimeProject, RuntimeSlot } from '../snapshot/runtime.ts';
import { countMessageTokens, countTextTokens } from '../tokens/count.ts';

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

function tokensOf(req: CanonicalRequest, type: ProviderType, outputCap: number): [number, number] {
  switch (req.kind) {
    case 'chat':
      return [countMessageTokens(req.messages, type), req.max_tokens ?? outputCap];
    case 'completion':
      return [countTextTokens(req.prompt, type), req.max_tokens ?? outputCap];
    case 'embedding':
      return [
        typeof req.input === 'string'
          ? countTextTokens(req.input, type)
          : req.input.reduce((n, s) => n + countTextTokens(s, type), 0),
        0,
      ];
    case 'image':
      return [countTextTokens(req.prompt, type), 0];
    case 'speech':
      return [countTextTokens(req.input, type), 0];
    case 'transcription':
      return [0, 0];
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
 * What a request may cost on one slot, before it is sent (docs/api.md, "Spend caps and rate limits"): input
 * tokens (tokens/count.ts: a real tokenizer for OpenAI models, 4 characters a token elsewhere) plus
 * `max_tokens`, else the model's maxOutputTokens, at list price; images at their price each; audio
 * by its estimated length. The same cost function prices the real usage afterwards.
 */
export function estimate(req: CanonicalRequest, project: RuntimeProject, slot: RuntimeSlot): Estimate {
  const [input, output] = tokensOf(req, slot.target.type, maxOutput(project, slot));
  const asked = req.kind === 'chat' || req.kind === 'completion' ? (req.max_tokens ?? 0) : 0;
  const pricing = slot.pricing;
  let micros: number | null;
  if (req.kind === 'image')
    micros = pricing?.usdPerImage === undefined ? null : (req.n ?? 1) * usdToMicros(pricing.usdPerImage);
  else if (req.kind === 'transcription')
    micros =
      pricing?.usdPerAudioSecond === undefined
        ? null
        : Math.ceil(req.file.byteLength / AUDIO_BYTES_PER_SECOND) * usdToMicros(pricing.usdPerAudioSecond);
  else
    micros = costMicros(
      { usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output } },
      pricing,
    );
  return { tokens: input + asked, micros };
}
