import type { RateKind, RateLimit } from './rates.ts';

/**
 * OpenAI's duration spelling for x-ratelimit-reset-*: `120ms`, `1.5s`, `6m0s`. Whole milliseconds
 * over 1000 print with at most three decimals and no trailing zeros, as JavaScript prints them.
 */
export function openAiDuration(ms: number): string {
  const v = Math.max(0, Math.ceil(ms));
  if (v < 1000) return `${v}ms`;
  if (v < 60_000) return `${v / 1000}s`;
  const m = Math.floor(v / 60_000);
  return `${m}m${(v - m * 60_000) / 1000}s`;
}

/** What one limit has left, as its headers say it. */
export interface RateState {
  remaining: number;
  /** Until the limit is full again. */
  resetMs: number;
}

const KINDS: readonly RateKind[] = ['requests', 'tokens'];
const NAMES = {
  requests: ['x-ratelimit-limit-requests', 'x-ratelimit-remaining-requests', 'x-ratelimit-reset-requests'],
  tokens: ['x-ratelimit-limit-tokens', 'x-ratelimit-remaining-tokens', 'x-ratelimit-reset-tokens'],
} as const;

/**
 * The `x-ratelimit-*` trio per kind (docs/api.md, "Spend caps and rate limits"), from the tightest scope
 * (the one with the fewest cells left), plus `retry-after-ms` for the exact delay: the OpenAI SDKs
 * read it before `retry-after`, so their built-in retry waits just long enough.
 */
export function rateLimitHeaders(
  limits: readonly RateLimit[],
  states: readonly RateState[],
  retryMs: number | undefined,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kind of KINDS) {
    let best = -1;
    for (let i = 0; i < limits.length; i++) {
      const s = states[i];
      if (limits[i]!.kind !== kind || !s) continue;
      if (best < 0 || s.remaining < states[best]!.remaining) best = i;
    }
    if (best < 0) continue;
    const [limit, remaining, reset] = NAMES[kind];
    out[limit] = String(limits[best]!.perMinute);
    out[remaining] = String(states[best]!.remaining);
    out[reset] = openAiDuration(states[best]!.resetMs);
  }
  if (retryMs !== undefined) out['retry-after-ms'] = String(Math.max(1, retryMs));
  return out;
}
