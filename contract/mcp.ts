import { z } from 'zod';

/**
 * MCP servers as the gateway sees them: compiled from `MCPServer` resources, no Kubernetes types.
 * The gateway aggregates a project's servers into one virtual server at `/v1/mcp`.
 */

export const MCP = {
  /** Tool names a client sees are `<toolPrefix><separator><tool>`, within the spec's 1–128 characters. */
  separator: '__',
  maxToolNameLength: 128,
  defaultTimeoutMs: 30_000,
  maxTimeoutMs: 600_000,
} as const;

const decimal = z.string().regex(/^\d+(\.\d+)?$/);

export const mcpHeaderValue = z.object({
  name: z.string(),
  /** Sealed like every credential in the snapshot; opened by the gateway with its snapshot key. */
  value: z.object({ alg: z.literal('A256GCM'), iv: z.string(), tag: z.string(), data: z.string() }),
});

export const mcpToolSettings = z.object({
  /** USD per call, a decimal string; counted toward the project's and the key's spend caps. */
  priceUsd: decimal.optional(),
  timeoutMs: z.number().int().positive().max(MCP.maxTimeoutMs).optional(),
});
export type McpToolSettings = z.infer<typeof mcpToolSettings>;

export const snapshotMcpServer = z.object({
  /** The resource's name within the project; unique per project. */
  name: z.string(),
  /** `<namespace>/<metadata.name>` of the source object, for logs and status. */
  source: z.string(),
  /** A remote Streamable HTTP endpoint; checked against the SSRF guard when the gateway connects. */
  url: z.string().url(),
  /** Headers the gateway sends upstream (static header or bearer from a Secret). Never the caller's token. */
  headers: z.array(mcpHeaderValue),
  /** Prepended to every tool, resource and prompt name with `MCP.separator`. */
  toolPrefix: z.string().min(1).max(32),
  /** Glob patterns (`*` only) over the upstream's unprefixed tool names; absent = all. */
  allowTools: z.array(z.string()).optional(),
  denyTools: z.array(z.string()),
  /** Per unprefixed tool name. */
  tools: z.record(z.string(), mcpToolSettings),
  timeoutMs: z.number().int().positive().max(MCP.maxTimeoutMs).default(MCP.defaultTimeoutMs),
  /** Per-tool-call rate limit for this server, shared by every pod. */
  callsPerMinute: z.number().int().positive().optional(),
  /**
   * This server may be on a private, loopback or link-local address (an in-cluster Service): the
   * SSRF guard lets it through as if the project allowed private networks, for this server only.
   * Absent: the project's `allowPrivateNetworks` decides.
   */
  allowPrivateNetworks: z.boolean().optional(),
});
export type SnapshotMcpServer = z.infer<typeof snapshotMcpServer>;

/**
 * The context a server's header value is sealed under (see `seal`): the operator seals with it,
 * the gateway opens `headers[i].value` with the same string. Header names are case-insensitive.
 */
export const mcpHeaderSealContext = (projectId: string, server: string, headerName: string): string =>
  `mcp:${projectId}/${server}:${headerName.toLowerCase()}`;
