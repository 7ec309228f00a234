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
  /**
   * Hash of one writer's (a gateway process's) batches Redis applied and the writer has not yet
   * acknowledged seeing applied: a batch sent again after its reply was lost is found here, not
   * written twice.
   */
  applied: (projectId: string, writer: string): string => `${tag(projectId)}:applied:${writer}`,
} as const;

/** A writer's applied-batches hash outlives its last write by this long (a killed pod's expires). */
export const APPLIED_TTL_SEC = 3600;

/** Field of the log stream holding the entry JSON. */
export const LOG_FIELD = 'e';

/** Usage hours are kept a little over a year, so "this month last year" still answers. */
export const USAGE_TTL_SEC = 400 * 86_400;
