import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';

/**
 * A small MCP server for `make run` and tests: `echo`, `add` and `time` (from an injected clock),
 * served over Streamable HTTP on loopback in both protocol eras (2026-07-28 stateless requests and
 * the 2025 `initialize` handshake) by the official SDK. No network, no state.
 */

export const DEMO_MCP_PATH = '/mcp';

export interface DemoMcpServer {
  /** The endpoint, e.g. http://127.0.0.1:41234/mcp. */
  url: string;
  /** Requests served, by JSON-RPC method (what tests and the probe check). */
  readonly calls: Map<string, number>;
  /** The headers of the last request (tests check credentials arrive). */
  readonly lastHeaders: Record<string, string>;
  close(): Promise<void>;
}

export interface DemoMcpOptions {
  host?: string;
  /** 0: any free port. */
  port?: number;
  now?: () => Date;
  /** Answer 401 unless the request carries this Authorization header value. */
  requireAuthorization?: string;
}

function demoServer(now: () => Date): McpServer {
  const server = new McpServer({ name: 'switchyard-demo', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Returns the text it is given.', inputSchema: z.object({ text: z.string() }) },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  server.registerTool(
    'add',
    {
      description: 'Adds two numbers.',
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      outputSchema: z.object({ sum: z.number() }),
    },
    async ({ a, b }) => ({
      content: [{ type: 'text', text: String(a + b) }],
      structuredContent: { sum: a + b },
    }),
  );
  server.registerTool(
    'time',
    { description: 'The current time (UTC, RFC 3339).', inputSchema: z.object({}) },
    async () => ({ content: [{ type: 'text', text: now().toISOString() }] }),
  );
  return server;
}

const methodsOf = (body: Buffer): string[] => {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    const list = Array.isArray(parsed) ? parsed : [parsed];
    return list.flatMap((m) =>
      m && typeof m === 'object' && typeof (m as { method?: unknown }).method === 'string'
        ? [(m as { method: string }).method]
        : [],
    );
  } catch {
    return [];
  }
};

/** Node's request as a web Request (the SDK's handler speaks fetch), aborted when the client goes. */
async function toRequest(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<Request> {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers))
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) for (const v of value) headers.append(name, v);
  const aborted = new AbortController();
  res.on('close', () => aborted.abort());
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD' && req.method !== 'DELETE';
  return new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, {
    method: req.method ?? 'GET',
    headers,
    ...(hasBody ? { body: new Uint8Array(body) } : {}),
    signal: aborted.signal,
  });
}

export async function startDemoMcpServer(opts: DemoMcpOptions = {}): Promise<DemoMcpServer> {
  const now = opts.now ?? (() => new Date());
  const handler = createMcpHandler(() => demoServer(now));
  const calls = new Map<string, number>();
  let lastHeaders: Record<string, string> = {};
  const http = createServer(async (req, res) => {
    try {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      lastHeaders = Object.fromEntries(
        Object.entries(req.headers).flatMap(([k, v]) => (typeof v === 'string' ? [[k, v]] : [])),
      );
      for (const m of methodsOf(body)) calls.set(m, (calls.get(m) ?? 0) + 1);
      if (new URL(req.url ?? '/', 'http://x').pathname !== DEMO_MCP_PATH) {
        res.writeHead(404).end();
        return;
      }
      if (
        opts.requireAuthorization !== undefined &&
        req.headers.authorization !== opts.requireAuthorization
      ) {
        res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"unauthorized"}');
        return;
      }
      const response = await handler.fetch(await toRequest(req, res, body));
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body) for await (const chunk of response.body) res.write(chunk);
      res.end();
    } catch (err) {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
      res.end(String((err as Error).message));
    }
  });
  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(opts.port ?? 0, opts.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://${opts.host ?? '127.0.0.1'}:${port}${DEMO_MCP_PATH}`,
    calls,
    get lastHeaders() {
      return lastHeaders;
    },
    close: async () => {
      await handler.close();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
