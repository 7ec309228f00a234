import type { AuthContext } from '../auth/authenticate.ts';
import type { ExchangeTrace } from '../tracing/types.ts';
import type { Prepared } from './prepare.ts';
import type { Carried, Notes, PipelineResult } from './result.ts';

/** Which surface a request came in through; `async` is a job run by a worker, `internal` a call of our own. */
export type Surface = 'native' | 'compat' | 'responses' | 'messages' | 'async' | 'internal';

/**
 * What an exchange is for. `request` is answered in its HTTP response; `accept` is the admission of
 * an async request (POST /v1/ai/async), whose `job` runs later on whichever pod takes it; `summary`
 * is a session-summary call. Features use it to decide what to do (a job's rate units were taken
 * when it was accepted, a summary counts toward caps but not toward rate limits).
 */
export type ExchangeKind = 'request' | 'accept' | 'job' | 'summary';

/**
 * What the pipeline has established about an exchange so far. Only the pipeline (run.ts) writes it;
 * the transport reads it once, when the exchange is settled (also after a client went away mid-way).
 */
export interface Progress {
  /** The client asked for a stream. */
  stream: boolean;
  prepared: Prepared | undefined;
  notes: Notes;
  result: PipelineResult | undefined;
}

/** One request, job or internal call on its way through the pipeline. Transport-neutral. */
export interface Exchange {
  /** The request_log_id. */
  readonly id: string;
  readonly kind: ExchangeKind;
  readonly surface: Surface;
  /** performance.now() when it started. */
  readonly startedAt: number;
  readonly auth: AuthContext;
  /** Aborted when the client goes away: upstream work stops. */
  readonly signal: AbortSignal;
  /** The request's Cache-Control header: the response cache honours no-cache and no-store. */
  readonly cacheControl?: string | undefined;
  readonly carried?: Carried | undefined;
  /** Its span (a no-op when tracing is off): the chain's attempts are its children. */
  readonly trace: ExchangeTrace;
  readonly progress: Progress;
}

/** What the code that owns a request knows when it opens its exchange. */
export interface ExchangeInit {
  id: string;
  kind: ExchangeKind;
  surface: Surface;
  /** performance.now() when the request started; now when left out. */
  startedAt?: number | undefined;
  auth: AuthContext;
  signal: AbortSignal;
  cacheControl?: string | undefined;
  carried?: Carried | undefined;
  trace: ExchangeTrace;
}

/**
 * The one constructor of an Exchange, for HTTP requests, async admissions and jobs and session
 * summaries alike. Every exchange has the same fields in the same order, so the pipeline's reads of
 * them stay monomorphic whichever transport opened it.
 */
export function openExchange(init: ExchangeInit): Exchange {
  return {
    id: init.id,
    kind: init.kind,
    surface: init.surface,
    startedAt: init.startedAt ?? performance.now(),
    auth: init.auth,
    signal: init.signal,
    cacheControl: init.cacheControl,
    carried: init.carried,
    trace: init.trace,
    progress: { stream: false, prepared: undefined, notes: {}, result: undefined },
  };
}
