import type {
  CallToolResult,
  Client,
  GetPromptResult,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplateType as ResourceTemplate,
  Tool,
} from '@modelcontextprotocol/client';
import type { Logger } from 'pino';
import type { SnapshotMcpServer } from '#contract';
import { guardedFetch, MAX_UPSTREAM_MESSAGE_BYTES } from './guarded-fetch.ts';

/** What the gateway tells an upstream about itself. */
const GATEWAY_INFO = { name: 'switchyard-gateway', version: '1' } as const;
/** After a failed connect, the server stays out of lists this long before the next try. */
const RETRY_AFTER_MS = 2000;
/**
 * A catalogue is kept this long, or until its server announces `list_changed`: a server that never
 * announces changes is still seen to change within this.
 */
const LIST_TTL_MS = 30_000;
/** Lists come back within this, or the server drops out of that list for now. */
const LIST_TIMEOUT_MS = 5000;

export type ListKind = 'tools' | 'resources' | 'resourceTemplates' | 'prompts';
export interface Catalogue {
  tools: Tool[];
  resources: Resource[];
  resourceTemplates: ResourceTemplate[];
  prompts: Prompt[];
}

/** The upstream of one project's MCPServer, as this gateway needs it. */
export interface UpstreamServer {
  projectId: string;
  config: SnapshotMcpServer;
  /** Headers opened from the snapshot's sealed values (once per snapshot). */
  headers: Record<string, string>;
  allowPrivateNetworks: boolean;
}

/** The upstream was unreachable, refused the handshake or timed out: its name is in the message. */
export class UpstreamUnavailable extends Error {
  readonly code = 'MCP_UPSTREAM_UNAVAILABLE';
}

interface Connection {
  fingerprint: string;
  /** The upstream sent a message past MAX_UPSTREAM_MESSAGE_BYTES: the connection is dropped. */
  readonly overflowed: boolean;
  client: Promise<Client>;
  lists: Partial<Record<ListKind, { at: number; list: Promise<unknown[]> }>>;
  failedAt: number | undefined;
}

function fingerprintOf(s: UpstreamServer): string {
  return JSON.stringify([s.config.url, s.headers, s.allowPrivateNetworks]);
}

/**
 * One client connection per (project, MCPServer) in this pod, shared by every client session:
 * upstream credentials are the server's, never a caller's, so nothing of one caller travels in
 * another's connection. A connection whose upstream lost its session (a restart, an expiry) is
 * replaced on the next use; catalogues are kept until the upstream says `list_changed`.
 */
export class UpstreamPool {
  readonly #connections = new Map<string, Connection>();
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #onListChanged: (projectId: string, kind: 'tools' | 'resources' | 'prompts') => void;
  readonly #onReach: (s: UpstreamServer, reached: boolean) => void;

  constructor(opts: {
    logger: Logger;
    now: () => number;
    onListChanged: (projectId: string, kind: 'tools' | 'resources' | 'prompts') => void;
    /** Told after each connection attempt whether the server was reached (metrics). */
    onReach?: (s: UpstreamServer, reached: boolean) => void;
  }) {
    this.#logger = opts.logger;
    this.#now = opts.now;
    this.#onListChanged = opts.onListChanged;
    this.#onReach = opts.onReach ?? (() => undefined);
  }

  #connection(s: UpstreamServer): Connection {
    const id = `${s.projectId}\u0000${s.config.name}`;
    const fingerprint = fingerprintOf(s);
    const known = this.#connections.get(id);
    if (known && known.fingerprint === fingerprint) {
      if (known.failedAt === undefined || this.#now() - known.failedAt < RETRY_AFTER_MS) return known;
    }
    if (known) void known.client.then((c) => c.close()).catch(() => undefined);
    const state = { overflowed: false };
    const conn: Connection = {
      fingerprint,
      get overflowed() {
        return state.overflowed;
      },
      client: this.#connect(s, () => {
        state.overflowed = true;
        this.#drop(s, conn);
      }),
      lists: {},
      failedAt: undefined,
    };
    conn.client.catch(() => {
      conn.failedAt = this.#now();
    });
    this.#connections.set(id, conn);
    return conn;
  }

  async #connect(s: UpstreamServer, onOverflow: () => void): Promise<Client> {
    const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
    const invalidate = (kind: 'tools' | 'resources' | 'prompts') => () => {
      const conn = this.#connections.get(`${s.projectId}\u0000${s.config.name}`);
      if (conn) {
        delete conn.lists[kind];
        if (kind === 'resources') delete conn.lists.resourceTemplates;
      }
      this.#onListChanged(s.projectId, kind);
    };
    const client = new Client(GATEWAY_INFO, {
      listChanged: {
        tools: { onChanged: invalidate('tools') },
        resources: { onChanged: invalidate('resources') },
        prompts: { onChanged: invalidate('prompts') },
      },
    });
    const transport = new StreamableHTTPClientTransport(new URL(s.config.url), {
      fetch: guardedFetch({ allowPrivateNetworks: s.allowPrivateNetworks }, onOverflow),
      requestInit: { headers: s.headers },
    });
    try {
      await client.connect(transport, { timeout: LIST_TIMEOUT_MS });
      this.#onReach(s, true);
    } catch (err) {
      this.#onReach(s, false);
      await client.close().catch(() => undefined);
      this.#logger.warn({
        msg: 'mcp upstream unreachable',
        server: s.config.source,
        err: (err as Error).message,
      });
      throw new UpstreamUnavailable(
        `MCP server "${s.config.name}" is unavailable: ${(err as Error).message}`,
      );
    }
    return client;
  }

  /** The client, connected; the connection is replaced once when the upstream lost its session. */
  async #use<T>(s: UpstreamServer, run: (c: Client) => Promise<T>): Promise<T> {
    let conn = this.#connection(s);
    let client = await conn.client;
    try {
      return await run(client);
    } catch (err) {
      if (conn.overflowed)
        throw new Error(
          `it sent a message larger than ${MAX_UPSTREAM_MESSAGE_BYTES / 2 ** 20} MiB; the connection was reset`,
        );
      if (!lostSession(err)) throw err;
      this.#drop(s, conn);
      conn = this.#connection(s);
      client = await conn.client;
      return run(client);
    }
  }

  #drop(s: UpstreamServer, conn: Connection): void {
    const id = `${s.projectId}\u0000${s.config.name}`;
    if (this.#connections.get(id) === conn) this.#connections.delete(id);
    void conn.client.then((c) => c.close()).catch(() => undefined);
  }

  /** One list of one server, cached until `list_changed` or LIST_TTL_MS; rejects when the server is unavailable. */
  list<K extends ListKind>(s: UpstreamServer, kind: K): Promise<Catalogue[K]> {
    const conn = this.#connection(s);
    const cached = conn.lists[kind];
    if (cached && this.#now() - cached.at < LIST_TTL_MS) return cached.list as Promise<Catalogue[K]>;
    const fetched = this.#use(s, async (c) => {
      const caps = c.getServerCapabilities();
      const opts = { timeout: LIST_TIMEOUT_MS };
      switch (kind) {
        case 'tools':
          return caps?.tools ? (await c.listTools(undefined, opts)).tools : [];
        case 'resources':
          return caps?.resources ? (await c.listResources(undefined, opts)).resources : [];
        case 'resourceTemplates':
          return caps?.resources ? (await c.listResourceTemplates(undefined, opts)).resourceTemplates : [];
        default:
          return caps?.prompts ? (await c.listPrompts(undefined, opts)).prompts : [];
      }
    }) as Promise<Catalogue[K]>;
    const entry = { at: this.#now(), list: fetched };
    conn.lists[kind] = entry;
    fetched.catch(() => {
      if (conn.lists[kind] === entry) delete conn.lists[kind];
    });
    return fetched;
  }

  callTool(
    s: UpstreamServer,
    name: string,
    args: Record<string, unknown> | undefined,
    opts: { timeoutMs: number; signal: AbortSignal },
  ): Promise<CallToolResult> {
    return this.#use(s, (c) =>
      c.callTool(
        { name, ...(args ? { arguments: args } : {}) },
        { timeout: opts.timeoutMs, signal: opts.signal },
      ),
    ) as Promise<CallToolResult>;
  }

  readResource(s: UpstreamServer, uri: string, opts: { timeoutMs: number }): Promise<ReadResourceResult> {
    return this.#use(s, (c) => c.readResource({ uri }, { timeout: opts.timeoutMs }));
  }

  getPrompt(
    s: UpstreamServer,
    name: string,
    args: Record<string, string> | undefined,
    opts: { timeoutMs: number },
  ): Promise<GetPromptResult> {
    return this.#use(s, (c) =>
      c.getPrompt({ name, ...(args ? { arguments: args } : {}) }, { timeout: opts.timeoutMs }),
    );
  }

  /** Closes every connection (the gateway is stopping). */
  async close(): Promise<void> {
    const all = [...this.#connections.values()];
    this.#connections.clear();
    await Promise.allSettled(all.map((c) => c.client.then((client) => client.close())));
  }
}

/** The upstream answered 404 to our session id: it restarted or expired the session. */
function lostSession(err: unknown): boolean {
  const e = err as { code?: unknown; status?: unknown; message?: unknown };
  if (e?.status === 404 || (e as { data?: { status?: number } })?.data?.status === 404) return true;
  return typeof e?.message === 'string' && /\b404\b|session not found/i.test(e.message);
}
