import type { GatewayError } from '../errors/index.ts';
import type { CanonicalRequest, CanonicalResult, StreamEvent } from '../providers/types.ts';
import type { SlotGuard } from '../routing/plan.ts';
import type { Exchange } from './exchange.ts';
import type { Prepared } from './prepare.ts';
import type { Answer, Failure, Notes } from './result.ts';

/** How an exchange ended, as every feature run is told once (its `finish`). */
export type RunEnd =
  | { kind: 'answered'; answer: Answer }
  | { kind: 'failed'; failure: Failure }
  /** Refused after this run began: by a later feature, at the chain's gate, or every slot over its cap. */
  | { kind: 'refused'; error: GatewayError }
  /** An accepted async request: its job runs later, on an exchange of its own. */
  | { kind: 'queued' };

/** A stream's first event and the rest of it, as a `reviewStream` hook takes and returns them. */
export interface ReviewedStream {
  first: StreamEvent;
  rest: AsyncIterator<StreamEvent>;
}

/** What `finish` returns: nothing, or a write the answer waits for (it never rejects). */
export type Durable = Promise<void> | undefined;

/** What a feature's `begin` sees. */
export interface RunContext {
  ex: Exchange;
  /** The request as prepared (and as earlier features rewrote it). */
  p: Prepared;
  /**
   * Some feature may answer this request without a provider (a cached answer). A refusal that only
   * concerns provider calls (a project spend cap) then waits for `toChain` instead of being thrown.
   */
  providerOptional: boolean;
}

/**
 * A feature's part of one exchange: begun before the failover chain, finished once after it,
 * whatever happened in between. State of the exchange lives in the run (a closure), not in tables.
 */
export interface FeatureRun {
  /** This feature's notes (only the keys it owns). */
  notes?: Notes;
  /** An answer without a provider (a cache hit): the chain is not run. */
  answer?: CanonicalResult;
  /** The request as this feature rewrote it (session memory adds the conversation). */
  request?: CanonicalRequest;
  /**
   * The request, as `p`, is about to reach a provider (nothing answered it): throw to refuse it, or
   * return this feature's hook around each slot of the failover chain.
   */
  toChain?(p: Prepared): SlotGuard | undefined;
  /**
   * The answer, before any run finishes with it or the client gets it: returned as every feature
   * and the client may see it (guardrails mask it), or a GatewayError is thrown to refuse it.
   */
  review?(result: CanonicalResult): CanonicalResult | Promise<CanonicalResult>;
  /** The same for a stream about to be followed: its events as every feature and the client see them. */
  reviewStream?(opened: ReviewedStream): ReviewedStream;
  /** The exchange ended. Never throws; returns a write the answer must wait for, if any. */
  finish(end: RunEnd): Durable;
}

/**
 * One feature of the pipeline (limits and caps, response cache, session memory). Features never
 * import each other; the order they run in is declared once, in the composition root (gateway.ts).
 */
export interface Feature {
  readonly name: string;
  /** Whether this feature might answer the exchange itself, before any feature has begun. */
  mayAnswer?(ex: Exchange, p: Prepared): boolean;
  /** Begins the feature's part of an exchange; undefined when it has nothing to do. Throws to refuse. */
  begin(ctx: RunContext): Promise<FeatureRun | undefined> | FeatureRun | undefined;
}
