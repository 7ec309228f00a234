/** Waits before retries 1..7 (docs/api.md): 5 s, 30 s, 2 min, 10 min, 30 min, 1 h, 3 h. */
export const RETRY_DELAYS_MS = [5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 10_800_000] as const;

/** The first attempt plus one per retry. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/** A receiver's Retry-After is honoured up to this long. */
const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/**
 * When attempt `attempt + 1` goes out after attempt `attempt` failed, or undefined when the
 * budget is spent. Jitter (±20 %) spreads retries of many events failing at once; a Retry-After
 * longer than the schedule's wait wins.
 */
export function nextAttemptDelay(
  attempt: number,
  retryAfterMs: number | undefined,
  random: () => number = Math.random,
): number | undefined {
  const base = RETRY_DELAYS_MS[attempt - 1];
  if (base === undefined) return undefined;
  const jittered = Math.round(base * (0.8 + 0.4 * random()));
  return retryAfterMs === undefined
    ? jittered
    : Math.max(jittered, Math.min(retryAfterMs, MAX_RETRY_AFTER_MS));
}

/** Retry-After as seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}
