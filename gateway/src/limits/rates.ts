import type { SnapshotApiKey, SnapshotProject } from '#contract';
import type { RateRef } from '../spend/store.ts';

/**
 * Rate limits as GCRA (generic cell rate algorithm, as go-redis/redis_rate): a limit of N per
 * minute lets N through at once and then one every 60/N s; a request's tokens count as
 * that many cells. The TAT keys carry the project's hash tag, so a key's limit and its project's
 * limit are checked in the same script call on the same Redis Cluster slot.
 */

const MINUTE_US = 60_000_000;
const tag = (projectId: string): string => `switchyard:{p:${projectId}}:rl`;

export type RateKind = 'requests' | 'tokens';

/**
 * A minute's worth at once (go-redis/redis_rate's PerMinute): a client idle for a minute may send
 * its whole minute's allowance in one go, then one every 60/N s. A request larger than the burst
 * (a huge prompt against a small token limit) counts as the burst: it waits for a full bucket
 * instead of never passing.
 */
export const burstOf = (perMinute: number): number => perMinute;

/** One configured limit of a request, with what the 429 headers say about it. */
export interface RateLimit {
  scope: 'project' | 'key';
  kind: RateKind;
  perMinute: number;
  ref: RateRef;
  /** Units this request takes (1 for requests, estimated tokens for tokens), at most the burst. */
  cost: number;
}

type Config = SnapshotProject['rateLimit'] | SnapshotApiKey['rateLimit'];

function add(
  out: RateLimit[],
  scope: RateLimit['scope'],
  kind: RateKind,
  perMinute: number | undefined,
  key: string,
  cost: number,
): void {
  if (!perMinute || perMinute <= 0) return;
  out.push({
    scope,
    kind,
    perMinute,
    ref: { key, intervalUs: MINUTE_US / perMinute, burst: burstOf(perMinute) },
    cost: Math.min(cost, burstOf(perMinute)),
  });
}

/** The limits of one request: the project's and the key's, requests and tokens. */
export function requestLimits(
  projectId: string,
  project: Config,
  keyId: string,
  key: Config,
  tokens: number,
): RateLimit[] {
  const out: RateLimit[] = [];
  const p = tag(projectId);
  add(out, 'project', 'requests', project?.requestsPerMinute, `${p}:project:rpm`, 1);
  add(out, 'project', 'tokens', project?.tokensPerMinute, `${p}:project:tpm`, tokens);
  const k = `${p}:key:${keyId}`;
  add(out, 'key', 'requests', key?.requestsPerMinute, `${k}:rpm`, 1);
  add(out, 'key', 'tokens', key?.tokensPerMinute, `${k}:tpm`, tokens);
  return out;
}

export const usesTokens = (c: Config): boolean => (c?.tokensPerMinute ?? 0) > 0;
export const limited = (c: Config): boolean => (c?.requestsPerMinute ?? 0) > 0 || usesTokens(c);
