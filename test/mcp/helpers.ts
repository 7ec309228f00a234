/** A gateway in front of real MCP servers, configured with manifests like every gateway suite. */
import { type RunningGateway, type StartOptions, startGateway } from '../harness/gateway.ts';
import { apiKey, mcpServer, project } from '../harness/manifests.ts';
import { startUpstream, type Upstream } from './upstream.ts';

export const MCP_KEY = 'sy_live_McpKeyForTheGatewaySuite0123456789';
export const NARROW_KEY = 'sy_live_NarrowMcpKey0123456789abcdefghijk';
export const AI_ONLY_KEY = 'sy_live_AiOnlyKeyNoMcpScope0123456789abcd';
export const UP_TOKEN = 'upstream-token-alpha';

export interface McpEnv {
  gw: RunningGateway;
  alpha: Upstream;
  beta: Upstream;
  /** `http://…/v1/mcp` */
  endpoint: string;
  close(): Promise<void>;
}

/**
 * Two upstreams (prefixes `alpha` and `beta`) and one that is down (`gone`, a closed port); a key
 * granted everything of alpha and beta's echo/add, a key granted only `beta__echo`, and an ai-only key.
 */
export function manifests(
  alphaUrl: string,
  betaUrl: string,
  extra: { gonePort?: number; alphaSpec?: Record<string, unknown> } = {},
) {
  return [
    project('app', { outboundFetch: { allowPrivateNetworks: true } }),
    ...apiKey('mcp', MCP_KEY, {
      scopes: ['mcp'],
      toolGrants: ['alpha__*', 'beta__echo', 'beta__add', 'gone__*', 'beta__greet'],
    }),
    ...apiKey('narrow', NARROW_KEY, { scopes: ['mcp'], toolGrants: ['beta__echo'] }),
    ...apiKey('ai', AI_ONLY_KEY, { scopes: ['ai'] }),
    ...mcpServer('alpha', alphaUrl, {
      bearer: UP_TOKEN,
      spec: {
        toolPrefix: 'alpha',
        denyTools: ['secret'],
        tools: [{ name: 'slow', timeoutMs: 300 }],
        ...extra.alphaSpec,
      },
    }),
    ...mcpServer('beta', betaUrl, { spec: { toolPrefix: 'beta' } }),
    ...(extra.gonePort
      ? mcpServer('gone', `http://127.0.0.1:${extra.gonePort}/mcp`, { spec: { toolPrefix: 'gone' } })
      : []),
  ];
}

export async function startMcpEnv(opts: StartOptions & { gonePort?: number } = {}): Promise<McpEnv> {
  const alpha = await startUpstream('alpha');
  const beta = await startUpstream('beta');
  const { gonePort, ...start } = opts;
  const gw = await startGateway(manifests(alpha.url, beta.url, gonePort ? { gonePort } : {}), start);
  return {
    gw,
    alpha,
    beta,
    endpoint: `${gw.url}/v1/mcp`,
    async close() {
      await gw.close();
      await alpha.close();
      await beta.close();
    },
  };
}

/** One raw POST to the endpoint (for what SDK clients never send). */
export async function rawPost(
  url: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<{
  status: number;
  headers: Headers;
  json:
    | {
        id?: unknown;
        result?: Record<string, unknown>;
        error?: { code: number; message: string; data?: unknown };
      }
    | undefined;
}> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${MCP_KEY}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body,
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json: json as never };
}
