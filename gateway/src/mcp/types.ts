import type { RuntimeProject } from '../snapshot/runtime.ts';

export const SERVER_INFO = { name: 'switchyard', title: 'Switchyard MCP gateway', version: '1' } as const;
/** What the virtual server offers: the union of what its upstreams may offer, changes announced. */
export const CAPABILITIES = {
  tools: { listChanged: true },
  resources: { listChanged: true },
  prompts: { listChanged: true },
  logging: {},
} as const;

/** Who is asking, in which era, on whose behalf: one per HTTP request. */
export interface McpCaller {
  requestId: string;
  projectId: string;
  project: RuntimeProject;
  keyId: string;
  grants: readonly string[] | undefined;
  era: 'legacy' | 'modern';
  sessionId: string | undefined;
  signal: AbortSignal;
  traceparent: string | undefined;
}
