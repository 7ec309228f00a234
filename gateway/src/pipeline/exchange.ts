import type { AuthContext } from '../auth/authenticate.ts';
import type { RequestRecord } from '../observability/request-record.ts';

/** Which surface a request came in through; `async` is a job run by a worker, not an HTTP answer. */
export type Surface = 'native' | 'compat' | 'responses' | 'messages' | 'async';

/**
 * One request on its way through the pipeline: who asked, through which surface, and (in `record`)
 * what it did. Stages write the record; the settle stage turns it into the log line, the metrics,
 * the request-log entry and the usage increment, once.
 */
export interface Exchange {
  /** The request_log_id. */
  id: string;
  surface: Surface;
  /** performance.now() when the request arrived. */
  startedAt: number;
  auth: AuthContext;
  /** Aborted when the client goes away: upstream work stops. */
  signal: AbortSignal;
  record: RequestRecord;
  /** The request's Cache-Control header: the response cache honours no-cache and no-store. */
  cacheControl?: string | undefined;
  /** The `x-ratelimit-*` headers admission measured, sent with the answer (as OpenAI does). */
  rateLimitHeaders?: Record<string, string>;
  /**
   * Tokens admission took from token rate limits. An async job carries it from the accepting
   * exchange to its own, so the job's real usage corrects what was taken.
   */
  admittedTokens?: number;
}
