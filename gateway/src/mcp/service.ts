import { specTypeSchemas } from '@modelcontextprotocol/server';
import type { Logger } from 'pino';
import { MCP } from '#contract';
import type { RuntimeProject } from '../snapshot/runtime.ts';
import {
  ordered,
  promptsFor,
  resourcesFor,
  serverOfUri,
  templatesFor,
  toolsFor,
  type Viewer,
} from './catalogue.ts';
import {
  type JsonRpcMessage,
  LEGACY_VERSIONS,
  MODERN_VERSIONS,
  negotiateLegacy,
  SUPPORTED_VERSIONS,
} from './inbound.ts';
import { RPC, RpcFailure } from './jsonrpc.ts';
import { keyMayCall, routeName, serverExposes } from './names.ts';
import type { McpSession, McpSessionStore } from './sessions.ts';
import { callTool, type ToolCalls } from './tool-call.ts';
import { CAPABILITIES, type McpCaller, SERVER_INFO } from './types.ts';
import type { UpstreamPool, UpstreamServer } from './upstreams.ts';

export interface McpServiceDeps {
  pool: UpstreamPool;
  sessions: McpSessionStore;
  calls: ToolCalls;
  logger: Logger;
  now: () => number;
  sessionTtlMs: number;
}

/** The answer to `initialize`, and the id of the session it opened. */
export interface Opened {
  result: Record<string, unknown>;
  sessionId: string;
}

const PARAMS = {
  call: specTypeSchemas.CallToolRequestParams,
  read: specTypeSchemas.ReadResourceRequestParams,
  prompt: specTypeSchemas.GetPromptRequestParams,
  init: specTypeSchemas.InitializeRequestParams,
} as const;

function parse<T>(schema: { '~standard': { validate(v: unknown): unknown } }, value: unknown): T {
  const out = schema['~standard'].validate(value ?? {}) as {
    value?: T;
    issues?: { message: string; path?: unknown[] }[];
  };
  if (out.issues) {
    const first = out.issues[0];
    const where = first?.path?.length ? ` at params.${first.path.join('.')}` : '';
    throw new RpcFailure(RPC.invalidParams, `Invalid params${where}: ${first?.message ?? 'invalid'}`);
  }
  return out.value as T;
}

export function serversOf(project: RuntimeProject, projectId: string): UpstreamServer[] {
  return ordered(
    [...project.mcpServers.values()].map((m) => ({
      projectId,
      config: m.config,
      headers: m.headers,
      // The server's own setting wins; without one, the project's.
      allowPrivateNetworks: m.config.allowPrivateNetworks ?? project.config.allowPrivateNetworks,
    })),
  );
}

/**
 * The virtual server of one project: every method a client may call, whatever the era; the HTTP
 * layer (routes.ts) has already decided the era and the session.
 */
export class McpService {
  readonly #d: McpServiceDeps;

  constructor(deps: McpServiceDeps) {
    this.#d = deps;
  }

  get sessions(): McpSessionStore {
    return this.#d.sessions;
  }

  viewer(caller: McpCaller): Viewer {
    return {
      servers: serversOf(caller.project, caller.projectId),
      grants: caller.grants,
      nameCap: MCP.maxToolNameLength,
    };
  }

  /** Legacy `initialize`: opens a session bound to the caller's key. */
  async initialize(caller: McpCaller, params: unknown): Promise<Opened> {
    const p = parse<{
      protocolVersion: string;
      capabilities: Record<string, unknown>;
      clientInfo: Record<string, unknown>;
    }>(PARAMS.init, params);
    const protocolVersion = negotiateLegacy(p.protocolVersion);
    const session: McpSession = {
      keyId: caller.keyId,
      protocolVersion,
      clientCapabilities: p.capabilities,
      clientInfo: p.clientInfo,
      createdAt: this.#d.now(),
    };
    const sessionId = await this.#d.sessions.create(caller.projectId, session, this.#d.sessionTtlMs);
    return {
      sessionId,
      result: {
        protocolVersion,
        capabilities: CAPABILITIES,
        serverInfo: SERVER_INFO,
        instructions: 'Tools of this project, each named <server>__<tool>.',
      },
    };
  }

  /** Every method but `initialize`; throws RpcFailure for the JSON-RPC errors it answers with. */
  async dispatch(caller: McpCaller, message: JsonRpcMessage): Promise<Record<string, unknown>> {
    const params = message.params;
    const viewer = this.viewer(caller);
    switch (message.method) {
      case 'ping':
        return {};
      case 'server/discover':
        return {
          supportedVersions: caller.era === 'modern' ? [...MODERN_VERSIONS] : [...SUPPORTED_VERSIONS],
          capabilities: CAPABILITIES,
          serverInfo: SERVER_INFO,
          _meta: { 'io.modelcontextprotocol/serverInfo': SERVER_INFO },
        };
      case 'initialize':
        throw new RpcFailure(
          RPC.invalidRequest,
          caller.era === 'modern'
            ? 'initialize is not used with protocol version 2026-07-28; call server/discover.'
            : 'This session is already initialized; send initialize without an Mcp-Session-Id to open another.',
          { supported: [...LEGACY_VERSIONS] },
        );
      case 'logging/setLevel':
        return {};
      case 'tools/list':
        return { tools: await toolsFor(this.#d.pool, viewer) };
      case 'tools/call':
        return this.#call(caller, viewer, params, message.id);
      case 'resources/list':
        return { resources: await resourcesFor(this.#d.pool, viewer) };
      case 'resources/templates/list':
        return { resourceTemplates: await templatesFor(this.#d.pool, viewer) };
      case 'resources/read':
        return this.#read(viewer, params);
      case 'prompts/list':
        return { prompts: await promptsFor(this.#d.pool, viewer) };
      case 'prompts/get':
        return this.#prompt(viewer, params);
      default:
        throw new RpcFailure(RPC.methodNotFound, `Method not found: ${message.method}`);
    }
  }

  async #call(
    caller: McpCaller,
    viewer: Viewer,
    params: unknown,
    callId: string | number | undefined,
  ): Promise<Record<string, unknown>> {
    const p = parse<{ name: string; arguments?: Record<string, unknown> }>(PARAMS.call, params);
    const routed = routeName(
      viewer.servers.map((s) => s.config),
      p.name,
    );
    const server = routed && viewer.servers.find((s) => s.config.name === routed.server.name);
    if (!routed || !server || !serverExposes(server.config, routed.name))
      throw new RpcFailure(RPC.invalidParams, `Unknown tool: ${p.name}`);
    if (!keyMayCall(caller.grants, p.name))
      throw new RpcFailure(RPC.invalidParams, `Tool ${p.name} is not granted to this API key.`, {
        hint: "Add a pattern matching it to the ApiKey's spec.toolGrants.",
      });
    return (await callTool(this.#d.pool, this.#d.calls, caller, {
      server,
      tool: routed.name,
      prefixedName: p.name,
      arguments: p.arguments,
      callId,
    })) as unknown as Record<string, unknown>;
  }

  async #read(viewer: Viewer, params: unknown): Promise<Record<string, unknown>> {
    const p = parse<{ uri: string }>(PARAMS.read, params);
    const server = await serverOfUri(this.#d.pool, viewer, p.uri);
    if (!server) throw new RpcFailure(RPC.resourceNotFound, `Resource not found: ${p.uri}`, { uri: p.uri });
    return upstreamAnswer(server, () =>
      this.#d.pool.readResource(server, p.uri, { timeoutMs: server.config.timeoutMs }),
    );
  }

  async #prompt(viewer: Viewer, params: unknown): Promise<Record<string, unknown>> {
    const p = parse<{ name: string; arguments?: Record<string, string> }>(PARAMS.prompt, params);
    const routed = routeName(
      viewer.servers.map((s) => s.config),
      p.name,
    );
    const server = routed && viewer.servers.find((s) => s.config.name === routed.server.name);
    if (!routed || !server || !keyMayCall(viewer.grants, p.name))
      throw new RpcFailure(RPC.invalidParams, `Unknown prompt: ${p.name}`);
    return upstreamAnswer(server, () =>
      this.#d.pool.getPrompt(server, routed.name, p.arguments, { timeoutMs: server.config.timeoutMs }),
    );
  }
}

/** An upstream's JSON-RPC error is relayed as it is; an unreachable upstream is named. */
export async function upstreamAnswer(
  server: UpstreamServer,
  run: () => Promise<unknown>,
): Promise<Record<string, unknown>> {
  try {
    return (await run()) as Record<string, unknown>;
  } catch (err) {
    const e = err as { code?: unknown; message?: string; data?: unknown };
    if (typeof e.code === 'number' && e.code < 0 && e.code > -33000)
      throw new RpcFailure(e.code, e.message ?? 'upstream error', e.data);
    throw new RpcFailure(
      RPC.internalError,
      `MCP server "${server.config.name}" is unavailable: ${e.message ?? String(err)}`,
    );
  }
}
