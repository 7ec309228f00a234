import type { RuntimeKey, RuntimeProject } from '../snapshot/runtime.ts';
import type { ExchangeTrace } from '../tracing/types.ts';

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
  key: RuntimeKey;
  grants: readonly string[] | undefined;
  era: 'legacy' | 'modern';
  sessionId: string | undefined;
  signal: AbortSignal;
  /** The request's server span (continuing the caller's trace): tool calls are its children. */
  trace: ExchangeTrace;
}
