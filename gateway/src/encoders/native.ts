import type { Attempt } from '../routing/attempts.ts';

export interface NativeMeta {
  status: 'success' | 'error';
  http_status: number;
  workflow: string | null;
  requested_provider: string;
  requested_model: string;
  used_provider: string | null;
  used_model: string | null;
  duration_ms: number;
  usage: Record<string, number>;
  structured_output: boolean;
  attempts: Attempt[];
  session_id?: string;
  cache?: 'hit' | 'miss' | 'bypass';
  request_log_id: string;
}

export interface WrappedBody {
  data: unknown;
  customer_data: Record<string, unknown>;
  meta: NativeMeta;
  backups: { position: number; provider: string; model: string }[];
  error?: { message: string; details: { status: number; message: string } };
}
