import { z } from 'zod';
import type { ChatMessage } from '../providers/types.ts';

/**
 * Session memory: what a session holds, and the store contract both adapters (memory for embedded
 * mode, Redis on the runtime-state client) implement. Turns cross a process boundary (Redis), so
 * they are read back through zod.
 */

/** One message of the conversation as the provider saw it, with its token count (counted once, at append). */
export interface Turn {
  message: ChatMessage;
  tokens: number;
  /** Unix ms when it was appended. */
  at: number;
}

export const turnSchema = z.object({
  message: z.object({
    role: z.enum(['system', 'developer', 'user', 'assistant', 'tool']),
    content: z.union([z.string(), z.array(z.any()), z.null()]),
    name: z.string().optional(),
    tool_calls: z.array(z.any()).optional(),
    tool_call_id: z.string().optional(),
  }),
  tokens: z.number().int().nonnegative(),
  at: z.number(),
});

export interface SessionData {
  id: string;
  workflow: string;
  createdAt: number;
  /** The running summary of folded turns; '' until the first summarisation. */
  summary: string;
  /** Bumped by every summarisation; a fold applies only on the version it was computed from. */
  summaryVersion: number;
  summaryTokens: number;
  /** Turns folded into the summary so far. */
  foldedTurns: number;
  turns: Turn[];
}

/** Where a session lives: the project (its hash tag) and its idle lifetime. */
export interface SessionRef {
  projectId: string;
  sessionId: string;
  ttlSeconds: number;
}

/** A fold computed from version `expectedVersion`: turns [start, end) become `summary`. */
export interface Fold {
  expectedVersion: number;
  start: number;
  end: number;
  summary: string;
  summaryTokens: number;
}

export type FoldResult = { applied: true; version: number } | { applied: false; reason: 'gone' | 'stale' };

export interface SessionStore {
  create(ref: SessionRef, workflow: string): Promise<void>;
  /** The session, with its idle timer restarted; undefined when it does not exist (or expired). */
  load(ref: SessionRef): Promise<SessionData | undefined>;
  /** The session as it is, without restarting its idle timer (console reads); expiresAt in Unix ms. */
  peek(projectId: string, sessionId: string): Promise<(SessionData & { expiresAt: number }) | undefined>;
  /** Appends turns atomically (concurrent appends never lose one); false when the session is gone. */
  append(ref: SessionRef, turns: Turn[]): Promise<boolean>;
  /** Replaces turns [start, end) by the summary, atomically and only if the summary version is unchanged. */
  fold(ref: SessionRef, fold: Fold): Promise<FoldResult>;
  /** Sessions of a project that have not expired (for the sessions-active gauge). */
  countActive(projectId: string): Promise<number>;
  close(): Promise<void>;
}

export const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
