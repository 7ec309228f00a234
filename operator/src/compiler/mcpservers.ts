import { MCP, mcpHeaderSealContext, type SnapshotMcpServer, type SnapshotProject, seal } from '#contract';
import { type MCPServer, TOOL_PREFIX } from '../resources/mcpserver.ts';
import type { SecretIndex } from './secrets.ts';
import { olderFirst, type Reason } from './types.ts';
import type { Verdicts } from './verdicts.ts';

type Headers =
  | { ok: true; headers: SnapshotMcpServer['headers'] }
  | { ok: false; reason: Reason; message: string };

/** The prefix in effect: the spec's, else the object's name (which must then be a valid prefix). */
export const effectiveToolPrefix = (s: MCPServer): string => s.spec.toolPrefix ?? s.metadata.name;

function prefixProblem(s: MCPServer): string | undefined {
  const prefix = effectiveToolPrefix(s);
  if (TOOL_PREFIX.test(prefix) && !prefix.includes(MCP.separator)) return undefined;
  return s.spec.toolPrefix === undefined
    ? `metadata.name "${prefix}" cannot be the tool prefix (1-32 letters, digits, _ . -, no "${MCP.separator}"); set spec.toolPrefix`
    : `toolPrefix "${prefix}" must be 1-32 letters, digits, _ . - without "${MCP.separator}"`;
}

/** The upstream headers, sealed per project, server and header name. */
function compileHeaders(s: MCPServer, projectId: string, secrets: SecretIndex, sealKey: Buffer): Headers {
  const c = s.spec.credentials;
  if (!c) return { ok: true, headers: [] };
  const ref = c.bearer?.secretRef ?? c.header?.secretRef;
  if (!ref)
    return { ok: false, reason: 'InvalidSpec', message: 'credentials name neither bearer nor header' };
  const found = secrets.lookup(s.metadata.namespace, ref);
  if (!found.ok) return found;
  // A line break would let the Secret smuggle extra headers (or a body) into every upstream request.
  if (/[\r\n\0]/.test(found.value))
    return {
      ok: false,
      reason: 'SecretInvalid',
      message: `Secret "${ref.name}" key "${ref.key}" holds a line break or NUL, which no header value may`,
    };
  const name = c.header?.headerName ?? 'Authorization';
  const value = c.bearer ? `Bearer ${found.value}` : found.value;
  const context = mcpHeaderSealContext(projectId, s.metadata.name, name);
  return { ok: true, headers: [{ name, value: seal(sealKey, context, value) }] };
}

function compileOne(s: MCPServer, headers: SnapshotMcpServer['headers']): SnapshotMcpServer {
  const { spec } = s;
  const tools: SnapshotMcpServer['tools'] = {};
  for (const t of spec.tools)
    tools[t.name] = {
      ...(t.priceUsd !== undefined ? { priceUsd: t.priceUsd } : {}),
      ...(t.timeoutMs !== undefined ? { timeoutMs: t.timeoutMs } : {}),
    };
  return {
    name: s.metadata.name,
    source: `${s.metadata.namespace}/${s.metadata.name}`,
    url: spec.url,
    headers,
    toolPrefix: effectiveToolPrefix(s),
    ...(spec.allowTools ? { allowTools: [...new Set(spec.allowTools)].sort() } : {}),
    denyTools: [...new Set(spec.denyTools)].sort(),
    tools,
    timeoutMs: spec.timeoutMs,
    ...(spec.callsPerMinute !== undefined ? { callsPerMinute: spec.callsPerMinute } : {}),
    ...(spec.allowPrivateNetworks ? { allowPrivateNetworks: true } : {}),
  };
}

/**
 * Compiles every MCPServer into its project's `mcpServers`, keyed by project id then by name. Two
 * servers of a project with the same prefix would serve colliding tool names: the older one wins.
 */
export function compileMcpServers(
  servers: readonly MCPServer[],
  projectIds: Map<string, string>,
  secrets: SecretIndex,
  sealKey: Buffer,
  verdicts: Verdicts,
): Map<string, SnapshotProject['mcpServers']> {
  const out = new Map<string, SnapshotProject['mcpServers']>();
  const prefixes = new Map<string, string>();
  const idOf = (s: MCPServer): string => `${s.metadata.namespace}/${s.metadata.name}`;
  const sorted = [...servers].sort((a, b) => olderFirst(a, b, idOf(a).localeCompare(idOf(b))));
  for (const s of sorted) {
    const ns = s.metadata.namespace;
    const projectId = projectIds.get(`${ns}/${s.spec.projectRef.name}`);
    if (!projectId) {
      verdicts.fail(s, 'ProjectNotFound', `Project "${s.spec.projectRef.name}" not found in namespace ${ns}`);
      continue;
    }
    const problem = prefixProblem(s);
    if (problem) {
      verdicts.fail(s, 'InvalidSpec', problem, { projectId });
      continue;
    }
    const prefix = effectiveToolPrefix(s);
    const holder = prefixes.get(`${projectId}\0${prefix}`);
    if (holder) {
      verdicts.fail(
        s,
        'DuplicateToolPrefix',
        `MCPServer ${holder} of the same project already uses the tool prefix "${prefix}"; set a different spec.toolPrefix`,
        { projectId, toolPrefix: prefix },
      );
      continue;
    }
    const headers = compileHeaders(s, projectId, secrets, sealKey);
    if (!headers.ok) {
      verdicts.fail(s, headers.reason, `credentials: ${headers.message}`, { projectId, toolPrefix: prefix });
      continue;
    }
    prefixes.set(`${projectId}\0${prefix}`, idOf(s));
    const project = out.get(projectId) ?? {};
    project[s.metadata.name] = compileOne(s, headers.headers);
    out.set(projectId, project);
    verdicts.ok(s, `serving tools as ${prefix}${MCP.separator}<tool> in project ${projectId}`, {
      projectId,
      toolPrefix: prefix,
    });
  }
  return out;
}
