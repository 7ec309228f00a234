/**
 * The operator's MCPServer probe against real MCP servers on loopback: the SDK v2 server (both
 * eras, through the demo server `make run` serves), an SDK v1 server (the 2025 era only, with
 * sessions), one that is down, one that never answers, one behind the SSRF guard and one that
 * wants a credential.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer as V1Server } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { catalogueHash, type ProbeResult, probeMcpServer } from '#operator/mcp/probe';
import { type DemoMcpServer, startDemoMcpServer } from '../../embedded/demo-mcp-server.ts';

const listen = async (server: Server): Promise<string> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};
const stop = (server: Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

/** An SDK v1 server with sessions: initialize opens one, DELETE ends it. */
async function startV1Server(): Promise<{
  url: string;
  sessions: Map<string, unknown>;
  deleted: string[];
  server: Server;
}> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const deleted: string[] = [];
  const server = createServer(async (req, res) => {
    const id = req.headers['mcp-session-id'];
    if (req.method === 'DELETE' && typeof id === 'string') deleted.push(id);
    let transport = typeof id === 'string' ? sessions.get(id) : undefined;
    if (!transport) {
      const mcp = new V1Server({ name: 'v1-server', version: '0.9.0' });
      for (const name of ['lookup', 'create_issue', 'delete_repo'])
        mcp.registerTool(
          name,
          { description: `${name} tool`, inputSchema: { q: z.string() } },
          async ({ q }) => ({
            content: [{ type: 'text', text: q }],
          }),
        );
      const t: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sid) => {
          sessions.set(sid, t);
        },
      });
      t.onclose = () => {
        if (t.sessionId) sessions.delete(t.sessionId);
      };
      await mcp.connect(t);
      transport = t;
    }
    await transport.handleRequest(req, res);
  });
  return { url: `${await listen(server)}/mcp`, sessions, deleted, server };
}

const probe = (url: string, extra: Partial<Parameters<typeof probeMcpServer>[0]> = {}) =>
  probeMcpServer({ url, headers: {}, timeoutMs: 5000, allowPrivateNetworks: true, ...extra });

const failure = (r: ProbeResult) => (r.ok ? undefined : r);

describe('probing MCP servers', () => {
  let demo: DemoMcpServer;
  let guarded: DemoMcpServer;
  let v1: Awaited<ReturnType<typeof startV1Server>>;
  const servers: Server[] = [];

  beforeAll(async () => {
    demo = await startDemoMcpServer({ now: () => new Date('2026-01-01T00:00:00Z') });
    guarded = await startDemoMcpServer({ requireAuthorization: 'Bearer right-token' });
    v1 = await startV1Server();
  });
  afterAll(async () => {
    await Promise.all([demo.close(), guarded.close(), stop(v1.server), ...servers.map(stop)]);
  });

  it('an SDK v2 server: the 2026-07-28 era, its tools and a stable catalogue hash', async () => {
    const a = await probe(demo.url);
    const b = await probe(demo.url);
    console.log('v2 probe:', a);
    expect(a).toMatchObject({
      ok: true,
      protocolVersion: '2026-07-28',
      serverName: 'switchyard-demo 1.0.0',
      toolNames: ['echo', 'add', 'time'],
    });
    expect(a.ok && a.catalogueHash).toMatch(/^[0-9a-f]{64}$/);
    expect(a.ok && b.ok && a.catalogueHash === b.catalogueHash).toBe(true);
    expect(demo.calls.get('server/discover')).toBeGreaterThanOrEqual(2);
    expect(demo.calls.get('tools/call')).toBeUndefined(); // a probe never calls a tool
  });

  it('an SDK v1 server: falls back to the 2025 handshake and ends its session', async () => {
    const r = await probe(v1.url);
    console.log('v1 probe:', r, 'sessions left:', v1.sessions.size, 'deleted:', v1.deleted.length);
    expect(r).toMatchObject({
      ok: true,
      protocolVersion: expect.stringMatching(/^2025-/),
      serverName: 'v1-server 0.9.0',
      toolNames: ['lookup', 'create_issue', 'delete_repo'],
    });
    expect(v1.deleted).toHaveLength(1);
    expect(v1.sessions.size).toBe(0);
  });

  it('the catalogue hash ignores listing order and changes with a description', () => {
    const tool = (name: string, description: string) => ({
      name,
      description,
      inputSchema: { type: 'object' as const },
    });
    expect(catalogueHash([tool('a', 'x'), tool('b', 'y')])).toBe(
      catalogueHash([tool('b', 'y'), tool('a', 'x')]),
    );
    expect(catalogueHash([tool('a', 'x')])).not.toBe(catalogueHash([tool('a', 'changed')]));
  });

  it('credentials: sent on every request; wrong ones are Unauthorized', async () => {
    const right = await probe(guarded.url, { headers: { Authorization: 'Bearer right-token' } });
    expect(right.ok).toBe(true);
    expect(guarded.lastHeaders['authorization']).toBe('Bearer right-token');
    const wrong = await probe(guarded.url, { headers: { Authorization: 'Bearer wrong' } });
    console.log('wrong token:', wrong);
    expect(failure(wrong)?.reason).toBe('Unauthorized');
  });

  it('a server that is down: ConnectionFailed, quickly', async () => {
    const closed = createServer();
    const url = `${await listen(closed)}/mcp`;
    await stop(closed);
    const started = performance.now();
    const r = await probe(url);
    console.log('down:', r, `${Math.round(performance.now() - started)} ms`);
    expect(failure(r)?.reason).toBe('ConnectionFailed');
    expect(performance.now() - started).toBeLessThan(3000);
  });

  it('a server that never answers: Timeout at the deadline, the socket closed', async () => {
    const hang = createServer(() => {}); // accepts and never responds
    servers.push(hang);
    const url = `${await listen(hang)}/mcp`;
    const started = performance.now();
    const r = await probe(url, { timeoutMs: 400 });
    const ms = performance.now() - started;
    console.log('hang:', r, `${Math.round(ms)} ms`);
    expect(failure(r)?.reason).toBe('Timeout');
    expect(ms).toBeGreaterThanOrEqual(390);
    expect(ms).toBeLessThan(3000);
    // The abandoned request's socket is closed, not left to the server's timeouts.
    const open = () => new Promise<number>((resolve) => hang.getConnections((_e, n) => resolve(n)));
    for (let i = 0; i < 100 && (await open()) > 0; i++) await new Promise((r) => setImmediate(r));
    expect(await open()).toBe(0);
  });

  it('loopback without allowPrivateNetworks: AddressBlocked, and nothing reaches the server', async () => {
    const before = [...demo.calls.values()].reduce((a, b) => a + b, 0);
    const r = await probe(demo.url, { allowPrivateNetworks: false });
    const named = await probe(demo.url.replace('127.0.0.1', 'localhost'), { allowPrivateNetworks: false });
    console.log('blocked:', r, named);
    expect(failure(r)?.reason).toBe('AddressBlocked');
    expect(failure(named)?.reason).toBe('AddressBlocked');
    expect([...demo.calls.values()].reduce((a, b) => a + b, 0)).toBe(before);
  });

  it('something that is not an MCP server: ProtocolError', async () => {
    const web = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html>hi</html>'),
    );
    servers.push(web);
    const r = await probe(`${await listen(web)}/mcp`);
    console.log('not mcp:', r);
    expect(failure(r)?.reason).toBe('ProtocolError');
  });
});
