import { expect } from 'vitest';
import { API_KEY, apiKey, NS, provider, secret } from '../harness/manifests.ts';

/** Keys with ai+console scopes (console reads of sessions and request logs). */
export const ADMIN_KEY = 'sy_live_SessionAdminKeyAiConsole0123456789';
export const OTHER_ADMIN_KEY = 'sy_live_SessionOtherAdminKeyAiConsole01234';

export interface SessionView {
  object: string;
  id: string;
  project_id: string;
  workflow: string;
  created_at: string;
  expires_at: string;
  tokens: number;
  summary: string | null;
  summary_version: number;
  summary_tokens: number;
  folded_turns: number;
  turns: { role: string; content: unknown; tool_calls?: unknown[]; tokens: number; at: string }[];
}

export interface LogEntry {
  request_log_id: string;
  type: string;
  workflow: string | null;
  session_id: string | null;
  status: string;
  outcome: string;
  error_code: string | null;
  used_provider: string | null;
  used_model: string | null;
  usage: { prompt_tokens: number; completion_tokens?: number; total_tokens: number } | null;
  cost_usd: string | null;
  cache: string | null;
  stream: boolean;
  test_mode: boolean;
  details?: Record<string, unknown>;
}

export async function getJson<T>(
  url: string,
  path: string,
  key = ADMIN_KEY,
): Promise<{ status: number; json: T }> {
  const res = await fetch(`${url}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: res.status, json: (await res.json()) as T };
}

export async function logs(url: string, query: string, key = ADMIN_KEY): Promise<LogEntry[]> {
  const r = await getJson<{ data: LogEntry[] }>(url, `/v1/request-logs?${query}`, key);
  expect(r.status).toBe(200);
  return r.json.data;
}

/** A workflow of another project (same API name allowed: names are per project). */
export function workflowIn(project: string, objectName: string, spec: Record<string, unknown>) {
  return {
    apiVersion: 'switchyard.dev/v1alpha1',
    kind: 'Workflow',
    metadata: { name: objectName, namespace: NS },
    spec: { projectRef: { name: project }, ...spec },
  };
}

/** Base objects both suites add: console keys for both projects. */
export function adminKeys() {
  return [
    ...apiKey('admin', ADMIN_KEY, { scopes: ['ai', 'console'] }),
    ...apiKey('other-admin', OTHER_ADMIN_KEY, { project: 'other', scopes: ['ai', 'console'] }),
  ];
}

export { API_KEY, provider, secret };
