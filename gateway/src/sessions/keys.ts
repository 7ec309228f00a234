/**
 * Session keys in Redis, under the project's hash tag (the same `{p:<id>}` as every runtime-state
 * key), so one session's scripts touch keys of one Redis Cluster slot, and a session id looked up
 * under another project's tag simply does not exist there.
 */
const tag = (projectId: string): string => `switchyard:{p:${projectId}}`;

export const SESSION_KEYS = {
  /** Hash: w workflow, c created (ms), s summary, v summary version, st summary tokens, f folded turns. */
  meta: (projectId: string, sessionId: string): string => `${tag(projectId)}:session:${sessionId}`,
  /** List of turn JSON, oldest first. */
  turns: (projectId: string, sessionId: string): string => `${tag(projectId)}:session:${sessionId}:turns`,
  /** Sorted set of the project's session ids scored by expiry (ms): the sessions-active gauge. */
  index: (projectId: string): string => `${tag(projectId)}:sessions`,
} as const;
