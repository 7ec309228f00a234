import type { Attempt } from '../routing/attempts.ts';

/** What one request did; filled in by the handlers, logged and counted once the response is sent. */
export interface RequestRecord {
  surface: 'native' | 'compat' | 'other';
  project?: string;
  keyId?: string;
  workflow?: string | null;
  usedProvider?: string | null;
  usedModel?: string | null;
  attempts?: Attempt[];
  usage?: Record<string, number>;
  customerData?: Record<string, unknown>;
  outcome?: 'success' | 'upstream_error' | 'client_error' | 'stream_error' | 'aborted';
  stream?: boolean;
  ttftMs?: number;
  testMode?: boolean;
}
