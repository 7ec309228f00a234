import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import {
  API_KEY_SCOPES,
  microsToUsd,
  periodWindow,
  SPEND_PERIODS,
  type SpendState,
  spendState,
} from '#contract';
import { GatewayError } from '../errors/index.ts';
import { authOf } from '../http/context.ts';
import { invalidRequest } from '../requests/zod-error.ts';
import type { RuntimeKey, RuntimeProject } from '../snapshot/runtime.ts';
import type { SnapshotStore } from '../snapshot/store.ts';
import { capRef, capsOf } from '../spend/rules.ts';
import type { GuardStore } from '../spend/store.ts';

/** A query string checked by `schema`: an unknown parameter is named, like the read APIs do. */
export function parseQuery<T>(schema: z.ZodType<T>, raw: unknown): T {
  const parsed = schema.safeParse(raw ?? {});
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  if (issue?.code === 'unrecognized_keys')
    throw new GatewayError('invalid_request', `Unknown query parameter "${issue.keys[0]}".`, {
      param: issue.keys[0],
    });
  throw invalidRequest(parsed.error);
}

const STATES = ['ok', 'warning', 'critical', 'exceeded'] as const satisfies readonly SpendState[];

const limitsQuery = z
  .object({
    scope: z.enum(['project', 'workflow'], { error: 'scope must be project or workflow' }).optional(),
    workflow: z.string().min(1).max(128).optional(),
    period: z.enum(SPEND_PERIODS, { error: `period must be one of ${SPEND_PERIODS.join(', ')}` }).optional(),
    state: z.enum(STATES, { error: `state must be one of ${STATES.join(', ')}` }).optional(),
  })
  .strict();

const keysQuery = z
  .object({
    scope: z.enum(API_KEY_SCOPES, { error: `scope must be one of ${API_KEY_SCOPES.join(', ')}` }).optional(),
    state: z.enum(['active', 'rotating'], { error: 'state must be active or rotating' }).optional(),
  })
  .strict();

const pct = (part: number, whole: number): number =>
  whole <= 0 ? 100 : Math.round((part / whole) * 1000) / 10;

/**
 * The first 8 hex digits of the key's SHA-256: enough to tell keys apart and to match one a holder
 * has (`printf %s "$KEY" | sha256sum`), nothing to rebuild it from. The key itself is never here.
 */
const fingerprint = (keyHash: string): string => `sha256:${keyHash.slice(0, 8)}`;

/** The declared object a key or cap comes from: `<namespace>/<name>` of its resource. */
const resource = (kind: string, id: string) => {
  const slash = id.indexOf('/');
  return { kind, namespace: id.slice(0, slash), name: id.slice(slash + 1) };
};

function keysOf(project: RuntimeProject, keys: Map<string, RuntimeKey>, nowMs: number) {
  const byId = new Map<string, { key: RuntimeKey; hash: string }[]>();
  for (const [hash, key] of keys) {
    if (key.projectId !== project.config.id) continue;
    const list = byId.get(key.keyId) ?? [];
    list.push({ key, hash });
    byId.set(key.keyId, list);
  }
  return [...byId].map(([keyId, creds]) => {
    // The compiler lists an ApiKey's current key first and its rotated-out key, still in its grace
    // period, after it.
    const [current, ...previous] = creds;
    const k = current!.key;
    return {
      key_id: keyId,
      resource: resource('ApiKey', keyId),
      scopes: k.scopes,
      fingerprint: fingerprint(current!.hash),
      expires_at: k.notAfter ?? null,
      expires_in_s: k.notAfter ? Math.max(0, Math.round((k.notAfterMs - nowMs) / 1000)) : null,
      rotation:
        previous.length > 0
          ? {
              state: 'rotating' as const,
              previous: previous.map((p) => ({
                fingerprint: fingerprint(p.hash),
                valid_until: p.key.notAfter ?? null,
              })),
            }
          : { state: 'active' as const, previous: [] },
      rate_limit: k.rateLimit ?? null,
      tool_grants: k.toolGrants ?? null,
    };
  });
}

export interface ViewsOptions {
  snapshots: SnapshotStore;
  guard: GuardStore;
  now: () => number;
}

/**
 * What the console shows of a project beside its workflows, each read server-side and filtered
 * there: spend caps as declared with what runtime state has counted this period, rate limits, the
 * project's API keys (never a key: a fingerprint of its digest) and its webhook endpoints (never a
 * secret). The project is the session's (or the key's); nothing else is reachable.
 */
export function viewRoutes(app: FastifyInstance, opts: ViewsOptions): void {
  const config = { scope: 'console' } as const;

  app.get('/api/limits', { config }, async (req) => {
    const q = parseQuery(limitsQuery, req.query);
    const auth = authOf(req);
    const project = auth.project;
    const nowMs = opts.now();
    const caps = capsOf(project.config);
    const rules = [...caps.project, ...[...caps.slots.values()].flatMap((s) => [...s.values()].flat())]
      .filter((r) => !q.scope || r.config.scope === q.scope)
      .filter((r) => !q.workflow || r.config.workflow === q.workflow)
      .filter((r) => !q.period || r.config.period === q.period);
    const refs = rules.map((r) => capRef(project.config.id, r, nowMs));
    const live = await opts.guard.peek(refs).catch(() => {
      throw new GatewayError(
        'service_unavailable',
        'Spend counters are unavailable right now; retry shortly.',
        {
          retryAfterSeconds: 1,
        },
      );
    });
    const data = rules
      .map((r, i) => {
        const c = r.config;
        const seen = live[i]!;
        const w = periodWindow(c.period, new Date(nowMs));
        return {
          id: c.id,
          resource: resource('SpendCap', c.id),
          scope: c.scope,
          workflow: c.workflow ?? null,
          slot: c.scope === 'workflow' ? (c.slot ?? 'primary') : null,
          period: c.period,
          limit_usd: c.limitUsd,
          spent_usd: microsToUsd(seen.spent),
          used_percent: pct(seen.spent, r.limitMicros),
          state: spendState(seen.spent, r.limitMicros),
          threshold_percent: seen.level || null,
          period_start: w.start.toISOString(),
          reset_at: w.end.toISOString(),
          leases: { leased_usd: microsToUsd(seen.leased), holders: seen.holders },
        };
      })
      .filter((c) => !q.state || c.state === q.state);
    const rate_limits = [
      ...(project.config.rateLimit
        ? [{ owner: 'project', id: project.config.id, ...rateOf(project.config.rateLimit) }]
        : []),
      ...keysOf(project, opts.snapshots.current?.keys ?? new Map(), nowMs)
        .filter((k) => k.rate_limit)
        .map((k) => ({ owner: 'api_key', id: k.key_id, ...rateOf(k.rate_limit!) })),
    ];
    return { object: 'limits', project_id: project.config.id, data, rate_limits };
  });

  app.get('/api/keys', { config }, async (req) => {
    const q = parseQuery(keysQuery, req.query);
    const auth = authOf(req);
    const runtime = opts.snapshots.current;
    const data = keysOf(auth.project, runtime?.keys ?? new Map(), opts.now())
      .filter((k) => !q.scope || k.scopes.includes(q.scope))
      .filter((k) => !q.state || k.rotation.state === q.state);
    return {
      object: 'list',
      project_id: auth.project.config.id,
      snapshot_version: runtime?.version ?? null,
      data,
    };
  });

  app.get('/api/webhooks', { config }, async (req) => {
    parseQuery(z.object({}).strict(), req.query);
    const project = authOf(req).project;
    return {
      object: 'list',
      project_id: project.config.id,
      allow_private_networks: project.config.allowPrivateNetworks,
      data: project.webhooks.map((w) => ({
        url: w.url,
        events: w.events,
        // Two secrets while one rotates (new first); never the secrets themselves.
        secret_rotating: w.secrets.length > 1,
      })),
    };
  });
}

const rateOf = (r: { requestsPerMinute?: number | undefined; tokensPerMinute?: number | undefined }) => ({
  requests_per_minute: r.requestsPerMinute ?? null,
  tokens_per_minute: r.tokensPerMinute ?? null,
});
