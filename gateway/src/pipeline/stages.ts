import { GatewayError } from '../errors/index.ts';
import type { CanonicalResult } from '../providers/types.ts';
import type { SlotGuard } from '../routing/plan.ts';
import type { Exchange } from './exchange.ts';
import type { Prepared } from './prepare.ts';

/**
 * The pluggable stages of the request pipeline (DESIGN.md "One request pipeline"). Each feature
 * issue replaces one default here; nothing else in the pipeline changes:
 * - admit: rate limits and the project spend cap (may throw 429/402/422/503);
 * - cache: exact response-cache lookup (a hit skips the failover chain);
 * - session: load (or start) session memory and put its turns into the request;
 * - slotGuard: per-slot spend-cap reservations, committed or released by the chain.
 * What a stage wants written after the answer goes into the Settlement (pipeline/settle.ts), so
 * settle stays one pipelined round trip.
 */
export interface PipelineStages {
  admit(ex: Exchange, p: Prepared): Promise<void>;
  cacheLookup(ex: Exchange, p: Prepared): Promise<CanonicalResult | undefined>;
  session(ex: Exchange, p: Prepared, sessionId: string | undefined): Promise<void>;
  slotGuard(ex: Exchange, p: Prepared): SlotGuard | undefined;
}

/** Until rate limits and caps exist, every request is admitted. */
const admitAll: PipelineStages['admit'] = async () => {};

/** No response cache configured anywhere yet: nothing is looked up, nothing is reported. */
const noCache: PipelineStages['cacheLookup'] = async () => undefined;

/** Without session memory no session exists, so any session_id names an unknown session. */
const noSessions: PipelineStages['session'] = async (_ex, _p, sessionId) => {
  if (sessionId !== undefined)
    throw new GatewayError('session_not_found', `Session "${sessionId}" does not exist in this project.`, {
      param: 'session_id',
    });
};

export const defaultStages: PipelineStages = {
  admit: admitAll,
  cacheLookup: noCache,
  session: noSessions,
  slotGuard: () => undefined,
};
