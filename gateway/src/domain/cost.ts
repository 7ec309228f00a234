import { type ModelPricing, usdToMicros } from '#contract';
import type { CanonicalResult, Usage } from '../providers/types.ts';
import type { RuntimeSlot } from '../snapshot/runtime.ts';

/** What a finished call consumed: token usage, and for media calls the units they are priced by. */
export interface Consumption {
  usage: Usage | undefined;
  result?: CanonicalResult | undefined;
}

/** Prices are a snapshot's few strings, read on every request: parsed once each. */
const priceMicros = new Map<string, number>();
function priceToMicros(price: string): number {
  let m = priceMicros.get(price);
  if (m === undefined) {
    if (priceMicros.size >= 4096) priceMicros.clear();
    m = usdToMicros(price);
    priceMicros.set(price, m);
  }
  return m;
}

const perMTok = (tokens: number, price: string): number => (tokens * priceToMicros(price)) / 1_000_000;

/** The price of each kind of input token: a cache price left unset falls back as the CRD says. */
const cachedPrice = (p: ModelPricing, input: string): string => p.cachedInputUsdPerMTok ?? input;
const writePrice = (p: ModelPricing, input: string): string => p.cacheWriteUsdPerMTok ?? input;
const hourWritePrice = (p: ModelPricing, input: string): string =>
  p.cacheWrite1hUsdPerMTok ?? writePrice(p, input);

/**
 * Input tokens at their own prices: fresh input, prompt-cache reads, five-minute and one-hour
 * prompt-cache writes. Unset cache prices are the input price, what a provider that reports no
 * cache split is charged.
 */
function tokenCost(usage: Usage | undefined, pricing: ModelPricing): number | null {
  if (!usage || pricing.inputUsdPerMTok === undefined) return null;
  const input = pricing.inputUsdPerMTok;
  const completion = usage.completion_tokens ?? 0;
  if (completion > 0 && pricing.outputUsdPerMTok === undefined) return null;
  const read = usage.cache_read_tokens ?? 0;
  const write = usage.cache_write_tokens ?? 0;
  const hour = usage.cache_write_1h_tokens ?? 0;
  let micros = perMTok(Math.max(0, usage.prompt_tokens - read - write), input);
  if (read > 0) micros += perMTok(read, cachedPrice(pricing, input));
  if (write > hour) micros += perMTok(write - hour, writePrice(pricing, input));
  if (hour > 0) micros += perMTok(hour, hourWritePrice(pricing, input));
  return completion > 0 ? micros + perMTok(completion, pricing.outputUsdPerMTok!) : micros;
}

/**
 * Usage that puts `input` tokens at the dearest input price the model has (a cache write usually
 * costs more than fresh input): what a reservation assumes, since it cannot know how much of the
 * prompt the provider's cache will read or write.
 */
export function ceilingUsage(input: number, output: number, pricing: ModelPricing | undefined): Usage {
  const u: Usage = { prompt_tokens: input, completion_tokens: output, total_tokens: input + output };
  const p = pricing;
  const base = p?.inputUsdPerMTok;
  if (
    !p ||
    base === undefined ||
    (p.cachedInputUsdPerMTok === undefined &&
      p.cacheWriteUsdPerMTok === undefined &&
      p.cacheWrite1hUsdPerMTok === undefined)
  )
    return u;
  const fresh = priceToMicros(base);
  const read = priceToMicros(cachedPrice(p, base));
  const write = priceToMicros(writePrice(p, base));
  const hour = priceToMicros(hourWritePrice(p, base));
  const top = Math.max(fresh, read, write, hour);
  if (top === fresh) return u;
  if (top === read) u.cache_read_tokens = input;
  else {
    u.cache_write_tokens = input;
    if (top === hour && top !== write) u.cache_write_1h_tokens = input;
  }
  return u;
}

/**
 * Cost in integer micro-USD at the model's list price, or null when the Provider's pricing does not
 * cover what was consumed: unknown is reported as unknown, never as a made-up zero. Fractions of a
 * micro-dollar round up, the safe side for spend caps.
 */
export function costMicros(c: Consumption, pricing: ModelPricing | undefined): number | null {
  if (!pricing) return null;
  const r = c.result;
  let micros: number | null;
  if (r?.kind === 'image' && pricing.usdPerImage !== undefined)
    micros = r.images.length * priceToMicros(pricing.usdPerImage);
  else if (
    r?.kind === 'transcription' &&
    r.durationSeconds !== undefined &&
    pricing.usdPerAudioSecond !== undefined
  )
    micros = r.durationSeconds * priceToMicros(pricing.usdPerAudioSecond);
  else micros = tokenCost(c.usage, pricing);
  return micros === null ? null : Math.ceil(micros);
}

/** What an answer cost: nothing in test mode or without a provider; else the slot's list price, or unknown. */
export function answerCost(
  plan: { testMode: boolean },
  slot: RuntimeSlot | undefined,
  usage: Usage | undefined,
  result?: CanonicalResult,
): number | null {
  if (plan.testMode || !slot) return 0;
  return costMicros({ usage, result }, slot.pricing);
}
