/** Redis keys of async requests, hash-tagged by project like the rest of runtime state. */
const tag = (projectId: string): string => `switchyard:{p:${projectId}}`;

export const ASYNC_KEYS = {
  /** Hash {state, doc}: one async request's channel. */
  channel: (projectId: string, channelId: string): string => `${tag(projectId)}:async:ch:${channelId}`,
  /** Hash {state, value, exp}: a ws_token, by the SHA-256 of the token (never the token itself). */
  token: (tokenHash: string): string => `switchyard:{ws}:token:${tokenHash}`,
  /** Pub/sub channel every pod listens on for finished results. */
  results: 'switchyard:async:results',
  /** Hash tag prefix of the BullMQ queues, so each queue's keys share one Cluster slot. */
  queuePrefix: '{switchyard-jobs}',
  /** The BullMQ queue of each kind of job. */
  queues: { run: 'async-run', timer: 'async-timer', webhook: 'webhook' },
} as const;

/**
 * BullMQ's keys (`<prefix>:<queue>:<state>`) that hold a queue's unfinished jobs: a job waits,
 * runs or is delayed in one of them, and each key is deleted when it empties.
 */
export const pendingJobKeys = (): string[] =>
  Object.values(ASYNC_KEYS.queues).flatMap((q) =>
    ['wait', 'active', 'delayed', 'prioritized', 'paused', 'waiting-children'].map(
      (state) => `${ASYNC_KEYS.queuePrefix}:${q}:${state}`,
    ),
  );
