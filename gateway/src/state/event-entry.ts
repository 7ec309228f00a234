import type { RequestLogEntry } from './types.ts';

/** What an event entry (webhook attempt, session summary, budget threshold) must say for itself. */
export type EventEntryFields = Pick<
  RequestLogEntry,
  'request_log_id' | 'type' | 'time' | 'project_id' | 'status' | 'outcome'
> &
  Partial<RequestLogEntry>;

/**
 * A request-log entry for something that is not an HTTP request: the fields a request fills in
 * (surface, key, usage, cost, ...) default to "none", so each feature states only what it knows.
 */
export function eventEntry(fields: EventEntryFields): RequestLogEntry {
  return {
    api_key_id: null,
    surface: 'internal',
    method: null,
    path: null,
    workflow: null,
    channel_id: null,
    session_id: null,
    http_status: 0,
    error_code: null,
    used_provider: null,
    used_model: null,
    attempts: [],
    usage: null,
    cost_usd: null,
    cache: null,
    stream: false,
    duration_ms: 0,
    ttft_ms: null,
    customer_data: {},
    test_mode: false,
    trace_id: null,
    ...fields,
  };
}
