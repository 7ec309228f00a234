import { z } from 'zod';
import type { CanonicalResult } from '../providers/types.ts';

/** One cached answer: the canonical result (rendered per surface on a hit) and what it cost when it was made. */
export interface CacheEntry {
  result: CanonicalResult;
  /** Integer micro-USD the original call cost (null when unpriced): what each hit saves. */
  costMicros: number | null;
  provider: string | null;
  model: string | null;
  /** Unix ms. */
  storedAt: number;
}

/** Entries come back from Redis: checked, not trusted (only the kinds the cache stores). */
export const cacheEntrySchema = z.object({
  result: z.custom<CanonicalResult>(
    (v) =>
      typeof v === 'object' &&
      v !== null &&
      ['chat', 'completion', 'embedding'].includes((v as { kind?: unknown }).kind as string),
  ),
  costMicros: z.number().nullable(),
  provider: z.string().nullable(),
  model: z.string().nullable(),
  storedAt: z.number(),
});

export interface CacheStore {
  get(projectId: string, key: string): Promise<CacheEntry | undefined>;
  set(projectId: string, key: string, entry: CacheEntry, ttlSeconds: number): Promise<void>;
  close(): Promise<void>;
}

/** Answers larger than this are not cached (a cache of huge answers evicts everything else). */
export const MAX_ENTRY_BYTES = 1_000_000;
