/**
 * What SDK clients never send, answered in JSON-RPC's shape with the transport's status: never a
 * 5xx for a client's mistake. Plus authorization discovery (RFC 9728) and session binding.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AI_ONLY_KEY, MCP_KEY, type McpEnv, NARROW_KEY, rawPost, startMcpEnv } from './helpers.ts';

const META = (v = '2026-07-28') => ({
  'io.modelcontextprotocol/protocolVersion': v,
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
});
const modern = (method: string, params: Record<string, unknown> = {}, v = '2026-07-28') =>
  JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: { ...params, _meta: META(v) } });
const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});

let env: McpEnv;
beforeAll(async () => {
  env = await startMcpEnv();
});
afterAll(async () => {
  await env?.close();
});

describe('authorization discovery', () => {
  it('401 without a key points at Protected Resource Metadata, which names the endpoint and bearer keys', async () => {
    for (const path of ['/v1/mcp', '/api/v1/mcp']) {
      const res = await fetch(`${env.gw.url}${path}`, {
        method: 'POST',
        body: INIT,
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBe(401);
      const challenge = res.headers.get('www-authenticate') ?? '';
      const url = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
      expect(url).toBe(`${env.gw.url}/.well-known/oauth-protected-resource${path}`);
      const meta = (await (await fetch(url as string)).json()) as Record<string, unknown>;
      expect(meta).toMatchObject({ resource: `${env.gw.url}${path}`, bearer_methods_supported: ['header'] });
    }
  });

  it('a key without the mcp scope gets 403 with insufficient_scope', async () => {
    const res = await rawPost(env.endpoint, INIT, { authorization: `Bearer ${AI_ONLY_KEY}` });
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toMatch(/error="insufficient_scope", scope="mcp"/);
  });
});

describe('malformed messages', () => {
  const cases: [string, string, Record<string, string>, number, number][] = [
    ['invalid JSON', '{"jsonrpc":"2.0",', {}, 400, -32700],
    ['an empty body', '', {}, 400, -32700],
    ['not JSON-RPC', '{"foo":1}', {}, 400, -32600],
    ['a batch', `[${INIT}]`, {}, 400, -32600],
    ['an unknown method', '{"jsonrpc":"2.0","id":3,"method":"tools/explode"}', {}, 200, -32601],
    [
      'bad tools/call params',
      '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":3}}',
      {},
      200,
      -32602,
    ],
    [
      'an unknown tool',
      '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"nope__x"}}',
      {},
      200,
      -32602,
    ],
    [
      'an unknown legacy version header',
      '{"jsonrpc":"2.0","id":3,"method":"tools/list"}',
      { 'mcp-protocol-version': '1999-01-01' },
      400,
      -32022,
    ],
    [
      'Mcp-Method disagreeing with the body',
      modern('server/discover'),
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' },
      400,
      -32020,
    ],
    [
      'Mcp-Name disagreeing with the body',
      modern('tools/call', { name: 'beta__echo', arguments: { text: 'x' } }),
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'alpha__echo' },
      400,
      -32020,
    ],
    [
      'a modern request without Mcp-Method',
      modern('tools/list'),
      { 'mcp-protocol-version': '2026-07-28' },
      400,
      -32020,
    ],
    [
      'an unknown modern version',
      modern('tools/list', {}, '2099-01-01'),
      { 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'tools/list' },
      400,
      -32022,
    ],
  ];
  for (const [what, body, headers, status, code] of cases)
    it(`${what}: ${status} with JSON-RPC error ${code}`, async () => {
      const res = await rawPost(env.endpoint, body, headers);
      expect(res.status).toBe(status);
      expect(res.json?.error?.code).toBe(code);
      if (code === -32022)
        expect(res.json?.error?.data).toMatchObject({
          supported: expect.arrayContaining(['2026-07-28', '2025-11-25']),
        });
    });

  it('a body past 4 MiB: 413 with a JSON-RPC error', async () => {
    const big = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'alpha__echo', arguments: { text: 'x'.repeat(5 * 1024 * 1024) } },
    });
    const res = await rawPost(env.endpoint, big);
    expect(res.status).toBe(413);
    expect(res.json?.error?.code).toBe(-32600);
  });
});

describe('the modern era over raw HTTP', () => {
  it('server/discover names the versions and capabilities; results carry resultType and private cache fields', async () => {
    const res = await rawPost(env.endpoint, modern('server/discover'), {
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'server/discover',
    });
    expect(res.status).toBe(200);
    expect(res.json?.result).toMatchObject({
      supportedVersions: ['2026-07-28'],
      resultType: 'complete',
      cacheScope: 'private',
    });
    const call = await rawPost(
      env.endpoint,
      modern('tools/call', { name: 'beta__echo', arguments: { text: 'm' } }),
      {
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'beta__echo',
      },
    );
    expect(call.json?.result).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: 'beta:m' }],
    });
  });
});

describe('legacy sessions over raw HTTP', () => {
  it('a session answers only the key that opened it; DELETE ends it; GET without one is 405', async () => {
    const init = await rawPost(env.endpoint, INIT);
    expect(init.json?.result).toMatchObject({ protocolVersion: '2025-06-18' });
    const sid = init.headers.get('mcp-session-id') as string;
    const list = '{"jsonrpc":"2.0","id":2,"method":"tools/list"}';
    expect((await rawPost(env.endpoint, list, { 'mcp-session-id': sid })).status).toBe(200);
    const stolen = await rawPost(env.endpoint, list, {
      'mcp-session-id': sid,
      authorization: `Bearer ${NARROW_KEY}`,
    });
    expect(stolen.status).toBe(404);
    expect((await rawPost(env.endpoint, list, { 'mcp-session-id': 'made-up' })).status).toBe(404);
    const del = await fetch(env.endpoint, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${MCP_KEY}`, 'mcp-session-id': sid },
    });
    expect(del.status).toBe(204);
    expect((await rawPost(env.endpoint, list, { 'mcp-session-id': sid })).status).toBe(404);
    const get = await fetch(env.endpoint, {
      headers: { authorization: `Bearer ${MCP_KEY}`, accept: 'text/event-stream' },
    });
    expect(get.status).toBe(405);
  });
});
