/**
 * Where gateways keep webhook delivery state in Redis, shared with the operator (which reports
 * disabled endpoints and dead letters in Project status). Project-tagged, like every runtime key.
 */
const tag = (projectId: string): string => `switchyard:{p:${projectId}}:webhooks`;

export const WEBHOOK_STATE_KEYS = {
  /** Sorted set of dead-letter ids by the time they died. */
  deadIndex: (projectId: string): string => `${tag(projectId)}:dead`,
  /** Hash of dead-letter id → the dead letter's JSON. */
  deadItems: (projectId: string): string => `${tag(projectId)}:dead:items`,
  /** Hash of endpoint URL → when a 410 disabled it (Unix ms). */
  disabled: (projectId: string): string => `${tag(projectId)}:disabled`,
} as const;
