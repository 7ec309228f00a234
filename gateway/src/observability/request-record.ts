import type { CheckFailure, RecordedFinding } from '../guardrails/note.ts';
import type { Attempt } from '../routing/attempts.ts';
import type { RequestLogType } from '../state/types.ts';

export type RequestOutcome =
  | 'success'
  | 'upstream_error'
  | 'client_error'
  | 'rate_limited'
  | 'budget_exceeded'
  | 'stream_error'
  | 'aborted'
  | 'unavailable';

/**
 * What one exchange did, flat: built once when it is settled (pipeline/finished.ts `recordOf`), and
 * turned into the log line, the metrics, the request-log entry and the usage increment.
 */
export interface RequestRecord {
  /** The request-log entry type; `request` unless the route says otherwise (e.g. `callback`). */
  logType?: RequestLogType;
  surface: 'native' | 'compat' | 'responses' | 'messages' | 'async' | 'internal' | 'other';
  project?: string;
  keyId?: string;
  workflow?: string | null;
  usedProvider?: string | null;
  usedModel?: string | null;
  attempts?: Attempt[];
  usage?: Record<string, number>;
  /** Integer micro-USD at list price; null when the model has no pricing; 0 in test mode. */
  costMicros?: number | null;
  customerData?: Record<string, unknown>;
  outcome?: RequestOutcome;
  /** The GatewayError code of a refused request, or the upstream error code of a failed one. */
  errorCode?: string;
  stream?: boolean;
  ttftMs?: number;
  testMode?: boolean;
  sessionId?: string | null;
  channelId?: string | null;
  cache?: 'hit' | 'miss' | 'bypass';
  /** A cache hit: what the original call cost (integer micro-USD; null when unpriced). */
  costSavedMicros?: number | null;
  /** The trace it belongs to, when tracing is on. */
  traceId?: string;
  /** Guardrail findings (never the value) and failed checks, when some rule fired. */
  guardrails?: { findings: RecordedFinding[]; failures?: CheckFailure[] };
  /** Only for projects that opt into bodies in request logs. */
  bodies?: { request: unknown; response: unknown };
}
