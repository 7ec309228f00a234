/**
 * /v1/mcp with the official SDK clients in front of real SDK servers: one virtual server per
 * project, names prefixed, lists merged in order, grants filtering what a key sees and calls,
 * upstream credentials the server's own, a dead upstream dropping out.
 */
import { createServer } from 'node:net';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_KEY, type McpEnv, NARROW_KEY, startMcpEnv, UP_TOKEN } from './helpers.ts';

async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

function textOf(result: object): string {
  return (result as { content?: { text?: string }[] }).content?.[0]?.text ?? '';
}

function v1Client(endpoint: string, key = MCP_KEY) {
  const client = new Client({ name: 'test-v1', version: '1' });
  const transport = new StreamableHTTPClientTransport(new URL(endpoint), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  return { client, transport };
}

let env: McpEnv;
beforeAll(async () => {
  env = await startMcpEnv({ gonePort: await closedPort(), mcp: { keepAliveMs: 100 } });
});
afterAll(async () => {
  await env?.close();
});

describe('/v1/mcp with the v1 SDK client (legacy era)', () => {
  it('lists the granted tools of every live server, prefixed, in prefix order; calls reach the right upstream with its own credential', async () => {
    const { client, transport } = v1Client(env.endpoint);
    await client.connect(transport);
    expect(transport.sessionId).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(client.getServerVersion()?.name).toBe('switchyard');
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    console.log(`tools/list: ${names.join(', ')}`);
    expect(names).toEqual([
      'alpha__echo',
      'alpha__add',
      'alpha__slow',
      'alpha__garbage',
      'alpha__flood',
      'beta__echo',
      'beta__add',
    ]);
    const echoed = await client.callTool({ name: 'alpha__echo', arguments: { text: 'hi' } });
    expect(echoed.content).toEqual([{ type: 'text', text: 'alpha:hi' }]);
    const summed = await client.callTool({ name: 'beta__add', arguments: { a: 2, b: 3 } });
    expect(summed.structuredContent).toEqual({ sum: 5 });
    expect(env.alpha.authorizations.length).toBeGreaterThan(0);
    expect(new Set(env.alpha.authorizations)).toEqual(new Set([`Bearer ${UP_TOKEN}`]));
    expect(env.beta.authorizations.every((a) => a === undefined)).toBe(true);
    await client.close();
  });

  it('refuses calls outside the grant or the allow/deny lists before they reach the upstream', async () => {
    const before = env.beta.calls.get('add') ?? 0;
    const { client, transport } = v1Client(env.endpoint, NARROW_KEY);
    await client.connect(transport);
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['beta__echo']);
    await expect(client.callTool({ name: 'beta__add', arguments: { a: 1, b: 1 } })).rejects.toThrow(
      /not granted/,
    );
    expect(env.beta.calls.get('add') ?? 0).toBe(before);
    await client.close();
    const wide = v1Client(env.endpoint);
    await wide.client.connect(wide.transport);
    await expect(wide.client.callTool({ name: 'alpha__secret' })).rejects.toThrow(/Unknown tool/);
    expect(env.alpha.calls.get('secret') ?? 0).toBe(0);
    await wide.client.close();
  });

  it('a tool past its timeout and a server that is down are tool errors naming them', async () => {
    const { client, transport } = v1Client(env.endpoint);
    await client.connect(transport);
    const slow = await client.callTool({ name: 'alpha__slow', arguments: { ms: 2000 } });
    expect(slow.isError).toBe(true);
    expect(textOf(slow)).toMatch(/"alpha" did not answer alpha__slow within 300 ms/);
    const gone = await client.callTool({ name: 'gone__anything', arguments: {} });
    expect(gone.isError).toBe(true);
    expect(textOf(gone)).toMatch(/MCP server "gone" is unavailable/);
    const metrics = await (await fetch(`${env.gw.metricsUrl}/metrics`)).text();
    expect(metrics).toMatch(/switchyard_mcp_upstream_up\{project="team\.app",server="gone"\} 0/);
    expect(metrics).toMatch(/switchyard_mcp_upstream_up\{project="team\.app",server="alpha"\} 1/);
    await client.close();
  });

  it('resources and prompts are aggregated with prefixed names and routed back', async () => {
    const { client, transport } = v1Client(env.endpoint);
    await client.connect(transport);
    const { resources } = await client.listResources();
    expect(resources.map((r) => [r.name, r.uri])).toEqual([['alpha__readme', 'memo://alpha/readme']]);
    const read = await client.readResource({ uri: 'memo://alpha/readme' });
    expect(read.contents[0]).toMatchObject({ text: 'readme of alpha' });
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(['alpha__greet', 'beta__greet']);
    const got = await client.getPrompt({ name: 'beta__greet', arguments: { who: 'Ada' } });
    expect(got.messages[0]?.content).toEqual({ type: 'text', text: 'Hello Ada from beta' });
    await client.close();
  });
});

describe('upstream sessions and streams', () => {
  it('an upstream that lost its session (a restart) is re-initialised without the client noticing', async () => {
    const { client, transport } = v1Client(env.endpoint);
    await client.connect(transport);
    await client.callTool({ name: 'alpha__echo', arguments: { text: 'one' } });
    env.alpha.dropSessions();
    const again = await client.callTool({ name: 'alpha__echo', arguments: { text: 'two' } });
    expect(again.content).toEqual([{ type: 'text', text: 'alpha:two' }]);
    await client.close();
  });

  it('a session’s GET stream carries keep-alive comments', async () => {
    const init = await fetch(env.endpoint, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${MCP_KEY}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'raw', version: '1' },
        },
      }),
    });
    const sid = init.headers.get('mcp-session-id') as string;
    const ac = new AbortController();
    const res = await fetch(env.endpoint, {
      headers: { authorization: `Bearer ${MCP_KEY}`, accept: 'text/event-stream', 'mcp-session-id': sid },
      signal: ac.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream');
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    while ((text.match(/: keep-alive/g) ?? []).length < 2)
      text += new TextDecoder().decode((await reader.read()).value);
    ac.abort();
    expect(text).toMatch(/^: stream open\n\n(: keep-alive\n\n)+/);
  });
});

describe('/v1/mcp with the v2 client', () => {
  it('connects with version negotiation on auto, lists and calls', async () => {
    const client = new ClientV2({ name: 'test-v2', version: '1' }, { versionNegotiation: { mode: 'auto' } });
    const transport = new TransportV2(new URL(env.endpoint), {
      requestInit: { headers: { authorization: `Bearer ${MCP_KEY}` } },
    });
    await client.connect(transport);
    console.log(`v2 client negotiated ${client.getNegotiatedProtocolVersion()}`);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain('beta__echo');
    const out = await client.callTool({ name: 'beta__echo', arguments: { text: 'v2' } });
    expect(out.content).toEqual([{ type: 'text', text: 'beta:v2' }]);
    await client.close();
  });
});
