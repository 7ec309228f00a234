/**
 * Upstream addresses go through the SSRF guard: a server on loopback is refused unless the project
 * or the MCPServer itself allows private networks; the refusal is a tool error naming the server,
 * and the other servers keep serving.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { apiKey, mcpServer, project } from '../harness/manifests.ts';
import { rawPost } from './helpers.ts';
import { startUpstream, type Upstream } from './upstream.ts';

const KEY = 'sy_live_GuardedMcpKey0123456789abcdefghijk';
let open: Upstream;
let closed: Upstream;
let gw: RunningGateway;

beforeAll(async () => {
  open = await startUpstream('open');
  closed = await startUpstream('closed');
  gw = await startGateway([
    project('app'),
    ...apiKey('k', KEY, { scopes: ['mcp'], toolGrants: ['*'] }),
    ...mcpServer('inside', open.url, { spec: { toolPrefix: 'inside', allowPrivateNetworks: true } }),
    ...mcpServer('blocked', closed.url, { spec: { toolPrefix: 'blocked' } }),
  ]);
});
afterAll(async () => {
  await gw?.close();
  await open?.close();
  await closed?.close();
});

it('a loopback server is reached only with allowPrivateNetworks; the blocked one is named, never connected to', async () => {
  const auth = { authorization: `Bearer ${KEY}` };
  const list = await rawPost(`${gw.url}/v1/mcp`, '{"jsonrpc":"2.0","id":1,"method":"tools/list"}', auth);
  const names = ((list.json?.result?.tools ?? []) as { name: string }[]).map((t) => t.name);
  expect(names).toContain('inside__echo');
  expect(names.some((n) => n.startsWith('blocked__'))).toBe(false);
  const call = await rawPost(
    `${gw.url}/v1/mcp`,
    '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"blocked__echo","arguments":{"text":"x"}}}',
    auth,
  );
  expect(call.json?.result).toMatchObject({ isError: true });
  const text = ((call.json?.result?.content ?? []) as { text: string }[])[0]?.text;
  expect(text).toMatch(/MCP server "blocked" is unavailable: .*(private|loopback|reserved)/);
  expect(closed.authorizations.length).toBe(0);
});
