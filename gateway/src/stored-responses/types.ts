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
  /** True when something was deleted. */
  delete(projectId: string, id: string): Promise<boolean>;
}
