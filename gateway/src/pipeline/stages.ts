import { GatewayError } from '../errors/index.ts';
import type { CanonicalResult, Usage } from '../providers/types.ts';
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
 * - completed: once the chain has answered (for a stream: once it ended), what features write
 *   afterwards (cache store, session append, rate-limit token correction). It never throws. Its
 *   Redis commands go out on the shared auto-pipelined client together with the settle stage's
 *   request-log write. It returns a promise only for a write the client's answer must wait for:
 *   a session turn is durable before its answer is sent, so a killed pod never loses an answered turn.
 */
export interface PipelineStages {
  admit(ex: Exchange, p: Prepared): Promise<void>;
  cacheLookup(ex: Exchange, p: Prepared): Promise<CanonicalResult | undefined>;
  session(ex: Exchange, p: Prepared, sessionId: string | undefined): Promise<void>;
  slotGuard(ex: Exchange, p: Prepared): SlotGuard | undefined;
  completed(ex: Exchange, p: Prepared, done: Completion): Durable;
}

/** What `completed` returns: nothing, or the write an answer waits for (it never rejects). */
export type Durable = Promise<void> | undefined;

/** Both stages' `completed` writes, for features that wrap an inner stage. */
export function bothDurable(a: Durable, b: Durable): Durable {
  if (!a) return b;
  if (!b) return a;
  return Promise.all([a, b]).then(() => undefined);
}

/** How the chain ended, for the `completed` stage. */
export type Completion =
  | { ok: true; result: CanonicalResult; usage: Usage | undefined; fromCache: boolean }
  | { ok: true; streamedText: string; usage: Usage | undefined }
  | { ok: false; usage: Usage | undefined }
  /** Accepted for an async job: what admission took stands until the job ends and corrects it. */
  | { ok: false; usage: undefined; queued: true };

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
  completed: () => undefined,
};
