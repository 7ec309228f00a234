import type { GatewayError } from '../errors/index.ts';
import type { GuardrailNote } from '../guardrails/note.ts';
import type { CanonicalResult, StreamEvent, Usage } from '../providers/types.ts';
import type { Attempt } from '../routing/attempts.ts';
import type { RuntimeSlot } from '../snapshot/runtime.ts';
import type { Prepared } from './prepare.ts';

export type CacheStatus = 'hit' | 'miss' | 'bypass';

/** What an accepted async request's admission leaves for its job, which corrects it when it ends. */
export interface Carried {
  /** Tokens taken from token rate limits at acceptance. */
  admittedTokens?: number;
}

/**
 * What features tell the answer and the request log about one exchange. Each key has one owner
 * (named), which returns it from its run; the pipeline merges them.
 */
export interface Notes {
  /** Session memory: the session the request continued or started. */
  sessionId?: string;
  /** Response cache: what the lookup found. */
  cache?: CacheStatus;
  /** Response cache: what the cached answer cost when it was made (µUSD; null when unpriced). */
  costSavedMicros?: number | null;
  /** Rate limits: the `x-ratelimit-*` headers admission measured, sent with the answer. */
  rateLimitHeaders?: Record<string, string>;
  /** Rate limits: what an accepted async request's admission leaves for its job. */
  carried?: Carried;
  /** Guardrails: the findings (rule, label, mode, hash; never the value) and failed checks. */
  guardrails?: GuardrailNote;
}

/** A request answered: the values features, encoders and settle read (never the log record). */
export interface Answer {
  /** The slot that answered; undefined when no provider was called (a feature answered). */
  slot: RuntimeSlot | undefined;
  attempts: Attempt[];
  result: CanonicalResult;
  /** The usage the provider reported; undefined when it reported none (a stream without usage). */
  usage: Usage | undefined;
  /** What this answer cost in integer µUSD at list price: 0 without a provider or in test mode; null when unpriced. */
  costMicros: number | null;
  /** The parsed structured-output value, when the request asked for one. */
  structured: unknown;
  /** Send → first content, for streams. */
  ttftMs?: number | undefined;
}

/** A request that reached providers and did not get an answer (the chain failed, or a stream broke). */
export interface Failure {
  /** The slot whose stream broke after it started; undefined when every slot failed before answering. */
  slot: RuntimeSlot | undefined;
  attempts: Attempt[];
  code: string;
  message: string;
  /** What the provider said (or our message when it said nothing). */
  providerMessage: string;
  /** HTTP status the provider failure maps to (meta.http_status). */
  httpStatus: number;
  /** The upstream's own status, when it sent one. */
  upstreamStatus: number | undefined;
  /** What was consumed before the failure (a broken stream), and its cost. */
  usage: Usage | undefined;
  costMicros: number | null;
  /** The client went away. */
  aborted: boolean;
  /** The gateway stopped the stream (a spend cap): reported with this code and type, not as upstream_error. */
  refusal?: { code: string; type: string } | undefined;
  ttftMs?: number | undefined;
}

/** How a stream ended: its answer, or its failure (reported in-stream, never as a silent end). */
export type StreamEnd = { ok: true; answer: Answer } | { ok: false; failure: Failure };

/** What the pipeline hands a surface's encoder. */
export type PipelineResult =
  | { kind: 'answered'; prepared: Prepared; notes: Notes; answer: Answer }
  | {
      kind: 'streaming';
      prepared: Prepared;
      notes: Notes;
      /** The slot streaming; undefined for a cached answer replayed as a stream. */
      slot: RuntimeSlot | undefined;
      /** Attempts up to the stream's start (the metadata event and headers name them). */
      attempts: Attempt[];
      /** Canonical events; returns how the stream ended. Never throws. */
      events: AsyncGenerator<StreamEvent, StreamEnd, void>;
      /** Resolves with the same end once the stream has ended and every feature finished. */
      ended: Promise<StreamEnd>;
    }
  | { kind: 'failed'; prepared: Prepared; notes: Notes; failure: Failure }
  | {
      kind: 'refused';
      prepared: Prepared | undefined;
      notes: Notes;
      error: GatewayError;
      /** The chain's attempts, when it was the chain that refused (every slot over its cap). */
      attempts?: Attempt[];
    };

export type Refused = Extract<PipelineResult, { kind: 'refused' }>;

export type FinishedResult = Exclude<PipelineResult, { kind: 'streaming' }>;
