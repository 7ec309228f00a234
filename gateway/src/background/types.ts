import type { Logger } from 'pino';
import { z } from 'zod';
import type { JobRunner } from '../async/runner.ts';
import type { ConversationStore } from '../conversations/types.ts';
import type { Pipeline } from '../pipeline/run.ts';
import type { Settle } from '../pipeline/settle.ts';
import type { SnapshotStore } from '../snapshot/store.ts';
import type { StoredResponseStore } from '../stored-responses/types.ts';
import type { Tracing } from '../tracing/types.ts';

/** What background responses are served with: accepting, running, cancelling and streaming share it. */
export interface BackgroundDeps {
  snapshots: SnapshotStore;
  pipeline: Pipeline;
  settle: Settle;
  logger: Logger;
  now: () => number;
  store: StoredResponseStore;
  conversations: ConversationStore;
  runner: JobRunner;
  tracing: Tracing;
  /**
   * How often a running job looks for a cancel of its response, and a stream reader for new events
   * (the state is in Redis, shared by every pod: polling needs no connection per reader).
   */
  pollMs: number;
}

/**
 * What a background response's job carries (RunJob.response), validated when a worker takes it: the
 * request as parsed and the conversation it continues, resolved when it was accepted, so the job
 * answers what was asked then, whichever pod runs it and whatever was appended since.
 */
export const backgroundJob = z.object({
  id: z.string(),
  createdAt: z.number(),
  request: z.record(z.string(), z.unknown()),
  history: z.array(z.record(z.string(), z.unknown())),
  sessionId: z.string().optional(),
  conversationId: z.string().optional(),
});
export type BackgroundJob = z.infer<typeof backgroundJob>;

/** Statuses a background response still changes from. */
export const LIVE = ['queued', 'in_progress'] as const;

/** The last event of a stream: after it, a reader stops. */
export const FINAL_EVENTS: ReadonlySet<string> = new Set([
  'response.completed',
  'response.incomplete',
  'error',
]);

export const DAY_MS = 86_400_000;
