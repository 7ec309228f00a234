/** One try of one slot, as reported in `meta.attempts`. */
export interface Attempt {
  provider: string;
  model: string;
  status: 'success' | 'error' | 'skipped';
  reason?: { message: string; status?: number; code?: string };
  duration_ms?: number;
}
