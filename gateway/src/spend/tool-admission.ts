import type { SnapshotApiKey, SnapshotProject } from '#contract';
import { type GatewayError, projectBudgetExceeded, rateLimited } from '../errors/index.ts';
import { type RateLimit, requestLimits } from '../limits/rates.ts';
import { capHold } from './admission.ts';
import { type SpendContext, take } from './context.ts';
import { type CapHold, release } from './holding.ts';
import type { LeaseNeeds, Taken } from './lease-types.ts';
import { capsOf } from './rules.ts';

/** One MCP tool call, as limits and caps see it. */
export interface ToolAdmit {
  /** For the leases' bookkeeping (the call's request id). */
  id: string;
  project: SnapshotProject;
  key: Pick<SnapshotApiKey, 'keyId' | 'rateLimit'>;
  /** The MCPServer's name, whose `callsPerMinute` limit the call takes a unit of. */
  server: string;
  callsPerMinute: number | undefined;
  /** The tool's price in µUSD (0: free, holds nothing on the caps). */
  micros: number;
}

/** An admitted call: told once what it cost (its price, or 0 when it never reached the upstream). */
export interface ToolHold {
  finish(actualMicros: number): void;
}

/** Why a tool call was refused: the error the AI surfaces would answer with, for its code and words. */
export class ToolRefusal extends Error {
  readonly error: GatewayError;
  constructor(error: GatewayError, message: string) {
    super(message);
    this.error = error;
  }
}

const NOTHING_HELD: ToolHold = { finish: () => undefined };
const MINUTE_US = 60_000_000;

function serverLimit(projectId: string, server: string, perMinute: number): RateLimit {
  return {
    scope: 'project',
    kind: 'requests',
    perMinute,
    ref: {
      key: `switchyard:{p:${projectId}}:rl:mcp:${server}:cpm`,
      intervalUs: MINUTE_US / perMinute,
      burst: perMinute,
    },
    cost: 1,
  };
}

/**
 * A tool call through the same admission leases as model calls: its price is held on the project's
 * spend caps (so a cap is overshot by less than one call's price, whatever the number of pods), one
 * unit is taken from the project's and the key's request limits and from the server's
 * `callsPerMinute`. Throws ToolRefusal; follows the outage policy when the store is unreachable.
 */
export function admitTool(ctx: SpendContext, t: ToolAdmit): ToolHold | Promise<ToolHold> {
  const pc = t.project;
  const rules = t.micros > 0 ? capsOf(pc).project : [];
  const hold: CapHold | undefined = rules.length ? capHold(ctx, pc.id, rules, t.micros) : undefined;
  const limits = requestLimits(pc, t.key, 0).filter((l) => l.kind === 'requests');
  if (t.callsPerMinute) limits.push(serverLimit(pc.id, t.server, t.callsPerMinute));
  if (!hold && !limits.length) return NOTHING_HELD;
  const needs: LeaseNeeds = {
    rates: limits.map((l) => ({ lease: ctx.leases.rate(pc.id, l.ref), units: l.cost })),
    caps: hold ? hold.leases.map((lease) => ({ lease, micros: t.micros })) : [],
  };
  const features = [
    ...(hold ? (['spend_caps'] as const) : []),
    ...(limits.length ? (['rate_limits'] as const) : []),
  ];
  const decide = (taken: Taken | undefined): ToolHold => {
    if (!taken) return NOTHING_HELD;
    if (taken.ok) return { finish: (actual) => release(ctx.leases, hold, actual, t.id) };
    if (taken.kind === 'rate') {
      const l = limits[taken.index] as RateLimit;
      // The server's limit is the last one, when it has one.
      const theServer = t.callsPerMinute !== undefined && taken.index === limits.length - 1;
      const whose = theServer
        ? `MCP server "${t.server}"`
        : l.scope === 'project'
          ? 'the project'
          : 'this API key';
      const seconds = (Math.max(1, taken.retryMs) / 1000).toFixed(3);
      throw new ToolRefusal(
        rateLimited(l.scope, 'requests', l.perMinute, taken.retryMs, {}),
        `Rate limit of ${l.perMinute} calls per minute for ${whose} reached. Try again in ${seconds}s.`,
      );
    }
    const rule = hold!.rules[taken.index]!;
    const error = projectBudgetExceeded({
      capId: rule.config.id,
      period: rule.config.period,
      limitMicros: rule.limitMicros,
      spentMicros: taken.spentMicros,
      resetAt: hold!.leases[taken.index]!.ref.resetAt,
    });
    throw new ToolRefusal(error, error.message);
  };
  const taken = take(ctx, pc.id, needs, features);
  return taken instanceof Promise ? taken.then(decide) : decide(taken);
}
