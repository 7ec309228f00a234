/**
 * Runtime-state keys in Redis. Every key of a project carries the project as its hash tag (the same
 * `{p:<id>}` tag as the spend keys in #contract), so one settlement's MULTI and one usage query's
 * pipeline each stay within one Redis Cluster slot.
 */
const tag = (projectId: string): string => `switchyard:{p:${projectId}}`;

export const STATE_KEYS = {
  /** Stream of request-log entries, newest last; field `e` holds the entry's JSON. */
  logs: (projectId: string): string => `${tag(projectId)}:logs`,
  /** Hash of usage counters for the UTC hour starting at `hourStartSec` (see usage-fields.ts). */
  usage: (projectId: string, hourStartSec: number): string => `${tag(projectId)}:usage:${hourStartSec}`,
} as const;

/** Field of the log stream holding the entry JSON. */
export const LOG_FIELD = 'e';

/** Usage hours are kept a little over a year, so "this month last year" still answers. */
export const USAGE_TTL_SEC = 400 * 86_400;
