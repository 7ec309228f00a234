import { z } from 'zod';

/**
 * A stored response: what GET /v1/responses/{id} and input_items return, and what
 * previous_response_id continues (the conversation so far, or the session it was answered in).
 */
export const storedResponse = z.object({
  id: z.string(),
  workflow: z.string(),
  /** The Response object as it was sent. */
  response: z.record(z.string(), z.unknown()),
  /** The request's input items, each with an id. */
  items: z.array(z.record(z.string(), z.unknown())),
  /** The conversation without instructions: every earlier turn, this input and this answer. */
  conversation: z.array(z.record(z.string(), z.unknown())),
  /** The session the response was answered in (session-memory workflows): the next turn continues it. */
  sessionId: z.string().optional(),
  /** Set on a background response (`background: true`): run as a job, cancellable, streamed from its event log when `stream`. */
  background: z.object({ stream: z.boolean() }).optional(),
});
export type StoredResponse = z.infer<typeof storedResponse>;

/** Stored responses of every project; a response id looked up under another project does not exist. */
export interface StoredResponseStore {
  /**
   * Resolves once the response is durable: the answer is sent after it. `responseJson`, when given,
   * is `record.response` already serialized for the answer, stored as is instead of a second time.
   */
  put(projectId: string, record: StoredResponse, ttlMs: number, responseJson?: string): Promise<void>;
  get(projectId: string, id: string): Promise<StoredResponse | undefined>;
  /**
   * Replaces the record, keeping its expiry, only while its response's status is one of `from`; false
   * when it is not (or the record is gone). Background responses change state this way, so of a
   * finishing job and a cancel exactly one wins.
   */
  transition(projectId: string, record: StoredResponse, from: readonly string[]): Promise<boolean>;
  /** True when something was deleted (its event log goes with it). */
  delete(projectId: string, id: string): Promise<boolean>;
  /** Appends stream events (JSON strings) to a background response's event log, which expires after `ttlMs`. */
  appendEvents(projectId: string, id: string, events: string[], ttlMs: number): Promise<void>;
  /** The event log from index `from` on (the index is the event's sequence_number). */
  events(projectId: string, id: string, from: number): Promise<string[]>;
}
