/**
 * Stored-response keys in Redis, under the project's hash tag (the same `{p:<id>}` as every
 * runtime-state key): an id looked up under another project's tag does not exist there.
 */
const tag = (projectId: string): string => `switchyard:{p:${projectId}}`;

export const STORED_RESPONSE_KEYS = {
  /** String: the StoredResponse JSON, expiring with the project's retention. */
  response: (projectId: string, id: string): string => `${tag(projectId)}:response:${id}`,
  /** List: a background streamed response's events, in sequence_number order. */
  events: (projectId: string, id: string): string => `${tag(projectId)}:response:${id}:events`,
} as const;
