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

/** A limit as the snapshot configures it; the request's cost is added per request. */
type LimitTemplate = Omit<RateLimit, 'cost'>;

function add(
  out: LimitTemplate[],
  scope: RateLimit['scope'],
  kind: RateKind,
  perMinute: number | undefined,
  key: string,
): void {
  if (!perMinute || perMinute <= 0) return;
  out.push({
    scope,
    kind,
    perMinute,
    ref: { key, intervalUs: MINUTE_US / perMinute, burst: burstOf(perMinute) },
  });
}

interface Memo {
  project: ProjectLimits;
  limits: LimitTemplate[];
}
/**
 * Per API key of a snapshot (its objects are the cache keys): the limits, their keys and refs are
 * built once, so a request only adds its cost and its lease lookups hash strings already hashed.
 */
const memo = new WeakMap<KeyLimits, Memo>();

interface ProjectLimits {
  id: string;
  rateLimit?: Config;
}
interface KeyLimits {
  keyId: string;
  rateLimit?: Config;
}

function templates(project: ProjectLimits, key: KeyLimits): LimitTemplate[] {
  const m = memo.get(key);
  if (m !== undefined && m.project === project) return m.limits;
  const limits: LimitTemplate[] = [];
  const p = tag(project.id);
  add(limits, 'project', 'requests', project.rateLimit?.requestsPerMinute, `${p}:project:rpm`);
  add(limits, 'project', 'tokens', project.rateLimit?.tokensPerMinute, `${p}:project:tpm`);
  const k = `${p}:key:${key.keyId}`;
  add(limits, 'key', 'requests', key.rateLimit?.requestsPerMinute, `${k}:rpm`);
  add(limits, 'key', 'tokens', key.rateLimit?.tokensPerMinute, `${k}:tpm`);
  memo.set(key, { project, limits });
  return limits;
}

/** The limits of one request: the project's and the key's, requests and tokens. */
export function requestLimits(project: ProjectLimits, key: KeyLimits, tokens: number): RateLimit[] {
  const t = templates(project, key);
  const out: RateLimit[] = new Array(t.length);
  for (let i = 0; i < t.length; i++) {
    const l = t[i] as LimitTemplate;
    out[i] = {
      scope: l.scope,
      kind: l.kind,
      perMinute: l.perMinute,
      ref: l.ref,
      cost: Math.min(l.kind === 'requests' ? 1 : tokens, l.ref.burst),
    };
  }
  return out;
}

export const usesTokens = (c: Config): boolean => (c?.tokensPerMinute ?? 0) > 0;
export const limited = (c: Config): boolean => (c?.requestsPerMinute ?? 0) > 0 || usesTokens(c);
