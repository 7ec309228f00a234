import { MCP, type SnapshotMcpServer } from '#contract';

/**
 * Names a client sees: every upstream tool, prompt and resource is `<toolPrefix>__<name>`, so two
 * servers' `search` never collide and a call is routed by its prefix alone (no catalogue lookup).
 */

/**
 * `*`-only globs matched without regular expressions: patterns come from resources and names from
 * upstreams, so neither may be able to make matching slow (the greedy two-pointer walk is linear in
 * practice and never backtracks more than the last star).
 */
export function globMatch(pattern: string, name: string): boolean {
  let p = 0;
  let n = 0;
  let star = -1;
  let mark = 0;
  while (n < name.length) {
    if (p < pattern.length && pattern[p] !== '*' && pattern[p] === name[n]) {
      p++;
      n++;
    } else if (p < pattern.length && pattern[p] === '*') {
      star = p++;
      mark = n;
    } else if (star !== -1) {
      p = star + 1;
      n = ++mark;
    } else return false;
  }
  while (p < pattern.length && pattern[p] === '*') p++;
  return p === pattern.length;
}

export function anyMatch(patterns: readonly string[] | undefined, name: string): boolean {
  if (!patterns) return false;
  for (const pattern of patterns) if (globMatch(pattern, name)) return true;
  return false;
}

export function prefixed(server: Pick<SnapshotMcpServer, 'toolPrefix'>, name: string): string {
  return `${server.toolPrefix}${MCP.separator}${name}`;
}

/** The server a prefixed name belongs to and the upstream's own name, or undefined. */
export function routeName(
  servers: Iterable<SnapshotMcpServer>,
  name: string,
): { server: SnapshotMcpServer; name: string } | undefined {
  const at = name.indexOf(MCP.separator);
  if (at <= 0) return undefined;
  const prefix = name.slice(0, at);
  for (const server of servers)
    if (server.toolPrefix === prefix) return { server, name: name.slice(at + MCP.separator.length) };
  return undefined;
}

/** The server offers this tool to clients at all: its allow list (absent = all) minus its deny list. */
export function serverExposes(server: SnapshotMcpServer, tool: string): boolean {
  if (server.allowTools && !anyMatch(server.allowTools, tool)) return false;
  return !anyMatch(server.denyTools, tool);
}

/** A key sees and calls only the prefixed names its grants match; no grants, no tools. */
export function keyMayCall(toolGrants: readonly string[] | undefined, prefixedName: string): boolean {
  return anyMatch(toolGrants, prefixedName);
}

/** Within the spec's 1–128 characters (or a shorter cap a deployment sets for its clients). */
export function nameFits(prefixedName: string, cap: number = MCP.maxToolNameLength): boolean {
  return prefixedName.length >= 1 && prefixedName.length <= cap;
}
