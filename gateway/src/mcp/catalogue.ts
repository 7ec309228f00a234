import type {
  Prompt,
  Resource,
  ResourceTemplateType as ResourceTemplate,
  Tool,
} from '@modelcontextprotocol/client';
import { keyMayCall, nameFits, prefixed, serverExposes } from './names.ts';
import type { UpstreamPool, UpstreamServer } from './upstreams.ts';

/** What one client may see, merged over the project's servers in the order of their prefixes. */
export interface Viewer {
  servers: readonly UpstreamServer[];
  grants: readonly string[] | undefined;
  /** The longest prefixed name this client accepts (128 unless a shorter cap is configured). */
  nameCap: number;
}

/** The project's servers in a stable order: by prefix, so lists merge the same way on every pod. */
export function ordered(servers: Iterable<UpstreamServer>): UpstreamServer[] {
  return [...servers].sort((a, b) => (a.config.toolPrefix < b.config.toolPrefix ? -1 : 1));
}

/** Each server's list, or nothing for a server that is down (the others keep serving). */
async function gather<T>(
  servers: readonly UpstreamServer[],
  fetch: (s: UpstreamServer) => Promise<T[]>,
): Promise<{ server: UpstreamServer; items: T[] }[]> {
  const lists = await Promise.all(servers.map((s) => fetch(s).catch(() => [] as T[])));
  return servers.map((server, i) => ({ server, items: lists[i] ?? [] }));
}

export async function toolsFor(pool: UpstreamPool, v: Viewer): Promise<Tool[]> {
  const out: Tool[] = [];
  for (const { server, items } of await gather(v.servers, (s) => pool.list(s, 'tools'))) {
    for (const tool of items) {
      const name = prefixed(server.config, tool.name);
      if (
        !serverExposes(server.config, tool.name) ||
        !keyMayCall(v.grants, name) ||
        !nameFits(name, v.nameCap)
      )
        continue;
      out.push({ ...tool, name });
    }
  }
  return out;
}

export async function promptsFor(pool: UpstreamPool, v: Viewer): Promise<Prompt[]> {
  const out: Prompt[] = [];
  for (const { server, items } of await gather(v.servers, (s) => pool.list(s, 'prompts'))) {
    for (const prompt of items) {
      const name = prefixed(server.config, prompt.name);
      if (keyMayCall(v.grants, name) && nameFits(name, v.nameCap)) out.push({ ...prompt, name });
    }
  }
  return out;
}

/**
 * Resources keep their URIs (a URI names the thing, not where it is served from); their names are
 * prefixed, and the grants match the prefixed name, as for tools and prompts.
 */
export async function resourcesFor(pool: UpstreamPool, v: Viewer): Promise<Resource[]> {
  const out: Resource[] = [];
  for (const { server, items } of await gather(v.servers, (s) => pool.list(s, 'resources'))) {
    for (const r of items) {
      const name = prefixed(server.config, r.name);
      if (keyMayCall(v.grants, name)) out.push({ ...r, name });
    }
  }
  return out;
}

export async function templatesFor(pool: UpstreamPool, v: Viewer): Promise<ResourceTemplate[]> {
  const out: ResourceTemplate[] = [];
  for (const { server, items } of await gather(v.servers, (s) => pool.list(s, 'resourceTemplates'))) {
    for (const t of items) {
      const name = prefixed(server.config, t.name);
      if (keyMayCall(v.grants, name)) out.push({ ...t, name });
    }
  }
  return out;
}

/** The server a resource URI is read from: the one listing it, else the one whose template it fits. */
export async function serverOfUri(
  pool: UpstreamPool,
  v: Viewer,
  uri: string,
): Promise<UpstreamServer | undefined> {
  for (const { server, items } of await gather(v.servers, (s) => pool.list(s, 'resources')))
    if (items.some((r) => r.uri === uri && keyMayCall(v.grants, prefixed(server.config, r.name))))
      return server;
  for (const { server, items } of await gather(v.servers, (s) => pool.list(s, 'resourceTemplates')))
    for (const t of items) {
      const fixed = t.uriTemplate.split('{')[0] ?? '';
      if (fixed.length > 0 && uri.startsWith(fixed) && keyMayCall(v.grants, prefixed(server.config, t.name)))
        return server;
    }
  return undefined;
}
