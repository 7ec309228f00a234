import type { Attempt } from './attempts.tsx';
import { href } from './route.ts';

export interface LogEntry {
  request_log_id: string;
  type: string;
  time: string;
  workflow: string | null;
  status: string;
  outcome: string;
  http_status: number;
  used_provider: string | null;
  used_model: string | null;
  attempts: Attempt[];
  duration_ms: number;
  cost_usd: string | null;
  [field: string]: unknown;
}

export interface LogPage {
  data: LogEntry[];
  next_cursor: string | null;
}

/** The permalink of one entry: its id, and its time so one query finds it. */
export const entryHref = (e: LogEntry): string =>
  href(['logs', e.request_log_id], { t: String(Date.parse(e.time)) });
