/**
 * Real MCP servers for the gateway to front: the official SDK's McpServer over Streamable HTTP with
 * sessions (the 2025 era, what most deployed servers speak), on a loopback port. Each records the
 * Authorization headers it received and how many tool calls reached it.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export interface Upstream {
  url: string;
  /** Authorization headers seen, in order. */
  authorizations: (string | undefined)[];
  /** tools/call requests that reached this server, by tool. */
  calls: Map<string, number>;
  /** Adds a tool on every open session and announces `tools/list_changed`. */
  addTool(name: string): void;
  /** Forgets every session (what a restart does): the gateway must open a new one. */
  dropSessions(): void;
  close(): Promise<void>;
}

function build(name: string, extra: string[], calls: Map<string, number>): McpServer {
  const server = new McpServer({ name, version: '1.0.0' });
  const count = (tool: string) => calls.set(tool, (calls.get(tool) ?? 0) + 1);
  server.registerTool(
    'echo',
    { description: 'Echoes its text.', inputSchema: { text: z.string() } },
    async ({ text }) => {
      count('echo');
      return { content: [{ type: 'text', text: `${name}:${text}` }] };
    },
  );
  server.registerTool(
    'add',
    { description: 'Adds two numbers.', inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => {
      count('add');
      return { content: [{ type: 'text', text: String(a + b) }], structuredContent: { sum: a + b } };
    },
  );
  server.registerTool('slow', { description: 'Waits.', inputSchema: { ms: z.number() } }, async ({ ms }) => {
    count('slow');
    await new Promise((r) => setTimeout(r, ms));
    return { content: [{ type: 'text', text: 'done' }] };
  });
  // Answered by the HTTP layer below, not by the SDK: an upstream that misbehaves.
  server.registerTool('garbage', { description: 'Answers with a body that is not JSON.' }, async () => ({
    content: [],
  }));
  server.registerTool('flood', { description: 'Answers with an endless stream.' }, async () => ({
    content: [],
  }));
  server.registerTool('secret', { description: 'Denied by the gateway.' }, async () => {
    count('secret');
    return { content: [{ type: 'text', text: 'leaked' }] };
  });
  for (const t of extra)
    server.registerTool(t, { description: `Added later: ${t}` }, async () => {
      count(t);
      return { content: [{ type: 'text', text: t }] };
    });
  server.registerResource('readme', `memo://${name}/readme`, { mimeType: 'text/plain' }, async (uri) => ({
    contents: [{ uri: uri.href, text: `readme of ${name}` }],
  }));
  server.registerPrompt('greet', { argsSchema: { who: z.string() } }, ({ who }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `Hello ${who} from ${name}` } }],
  }));
  return server;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

export async function startUpstream(name: string): Promise<Upstream> {
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: McpServer }>();
  const authorizations: (string | undefined)[] = [];
  const calls = new Map<string, number>();
  const extra: string[] = [];
  const flooded = { count: 0 };
  const http: Server = createServer((req, res) => {
    authorizations.push(req.headers.authorization);
    void (async () => {
      const sid = req.headers['mcp-session-id'];
      const body = req.method === 'POST' ? await readBody(req) : undefined;
      const call = body as { method?: string; params?: { name?: string } } | undefined;
      if (call?.method === 'tools/call' && call.params?.name === 'garbage') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"jsonrpc": "2.0", "id": oops');
        return;
      }
      if (call?.method === 'tools/call' && call.params?.name === 'flood') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const chunk = `data: ${'x'.repeat(1024 * 1024)}\n`;
        let sent = 0;
        const pump = () => {
          // Up to 1 GiB, as long as the reader keeps reading.
          while (sent < 1024 && res.write(chunk)) sent++;
          if (sent >= 1024) res.end();
        };
        res.on('drain', pump);
        res.on('close', () => res.off('drain', pump));
        pump();
        flooded.count++;
        return;
      }
      let entry = typeof sid === 'string' ? sessions.get(sid) : undefined;
      if (!entry) {
        if (typeof sid === 'string') {
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              jsonrpc: '2.0',
              id: null,
              error: { code: -32001, message: 'Session not found' },
            }),
          );
          return;
        }
        const server = build(name, extra, calls);
        const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            sessions.set(id, { transport, server });
          },
        });
        await server.connect(transport);
        entry = { transport, server };
      }
      await entry.transport.handleRequest(req, res, body);
    })().catch((err: Error) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(err.message);
    });
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    authorizations,
    calls,
    addTool(tool) {
      extra.push(tool);
      for (const { server } of sessions.values()) {
        server.registerTool(tool, { description: `Added later: ${tool}` }, async () => {
          calls.set(tool, (calls.get(tool) ?? 0) + 1);
          return { content: [{ type: 'text', text: tool }] };
        });
      }
    },
    dropSessions() {
      for (const { transport } of sessions.values()) void transport.close();
      sessions.clear();
    },
    async close() {
      for (const { transport } of sessions.values()) await transport.close().catch(() => undefined);
      http.closeAllConnections();
      await new Promise<void>((r) => http.close(() => r()));
    },
  };
}
