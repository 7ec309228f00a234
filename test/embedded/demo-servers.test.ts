/**
 * Embedded mode's MCP demo servers: the example's MCPServer is served on loopback before the
 * compile, survives reloads, moves to a free port when its own is taken, and answers real SDK
 * clients in both eras with its tools (time from an injected clock).
 */
import { createServer } from 'node:net';
import { resolve } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { hashApiKey, type Snapshot } from '#contract';
import { type MCPServer, switchyardObject } from '#operator/resources/index';
import { loadInto } from '../../embedded/config-source.ts';
import { startDemoMcpServer } from '../../embedded/demo-mcp-server.ts';
import { DEMO_ANNOTATION, EmbeddedDemoServers } from '../../embedded/demo-servers.ts';

const logger = pino({ level: 'silent' });
const EXAMPLE_KEY = 'sy_live_HEUADsAxMSNV8on9X3NkkU2lkBArrZ1v';
const opened: EmbeddedDemoServers[] = [];
afterAll(() => Promise.all(opened.map((d) => d.close())));

const demoServers = () => {
  const d = new EmbeddedDemoServers(logger);
  opened.push(d);
  return d;
};

const mcpObject = (name: string, url: string, demo = true): MCPServer =>
  switchyardObject.parse({
    apiVersion: 'switchyard.dev/v1alpha1',
    kind: 'MCPServer',
    metadata: { name, namespace: 'acme', ...(demo ? { annotations: { [DEMO_ANNOTATION]: 'true' } } : {}) },
    spec: { projectRef: { name: 'storefront' }, url },
  }) as MCPServer;

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

async function listTools(url: string, mode: 'auto' | 'legacy') {
  const client = new Client({ name: 'demo-test', version: '1' }, { versionNegotiation: { mode } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    return {
      version: client.getNegotiatedProtocolVersion(),
      tools: (await client.listTools()).tools.map((t) => t.name),
      time: await client.callTool({ name: 'time', arguments: {} }),
      sum: await client.callTool({ name: 'add', arguments: { a: 2, b: 40 } }),
    };
  } finally {
    await client.close();
  }
}

describe('embedded MCP demo servers', () => {
  it('the example folder: the storefront project links to a live demo server, the example key may call it', async () => {
    let installed: Snapshot | undefined;
    const sink = { install: (s: unknown) => (installed = s as Snapshot) };
    const demo = demoServers();
    const compiled = await loadInto(
      resolve(import.meta.dirname, '../../examples'),
      sink,
      Buffer.alloc(32, 1),
      logger,
      demo,
    );
    expect(compiled.verdicts.filter((v) => !v.ok)).toEqual([]);
    const server = installed?.projects['acme.storefront']?.mcpServers['demo'];
    expect(server).toMatchObject({
      toolPrefix: 'demo',
      allowPrivateNetworks: true,
      tools: { add: { priceUsd: '0.001' } },
    });
    expect(server?.url).toBe(demo.urls().get('acme/demo'));
    expect(installed?.apiKeys[hashApiKey(EXAMPLE_KEY)]).toMatchObject({
      scopes: ['ai', 'console', 'mcp'],
      toolGrants: ['demo__*'],
    });
    const modern = await listTools(server!.url, 'auto');
    const legacy = await listTools(server!.url, 'legacy');
    console.log(
      `demo at ${server?.url}: modern ${modern.version}, legacy ${legacy.version}, tools ${modern.tools.join(', ')}`,
    );
    expect(modern).toMatchObject({ version: '2026-07-28', tools: ['echo', 'add', 'time'] });
    expect(legacy).toMatchObject({
      version: expect.stringMatching(/^2025-/),
      tools: ['echo', 'add', 'time'],
    });
    expect(modern.sum).toMatchObject({ structuredContent: { sum: 42 } });
  });

  it("uses the URL's port when free, keeps the server across reloads, and leaves other MCPServers alone", async () => {
    const port = await freePort();
    const demo = demoServers();
    const url = `http://127.0.0.1:${port}/mcp`;
    const [first, plain] = await demo.apply([
      mcpObject('one', url),
      mcpObject('remote', 'https://mcp.example.com/mcp', false),
    ]);
    expect(first?.kind === 'MCPServer' && first.spec.url).toBe(url);
    expect(plain?.kind === 'MCPServer' && plain.spec.url).toBe('https://mcp.example.com/mcp');
    const [again] = await demo.apply([mcpObject('one', url)]);
    expect(again?.kind === 'MCPServer' && again.spec.url).toBe(url);
    expect(demo.urls().size).toBe(1);
    expect((await listTools(url, 'auto')).tools).toEqual(['echo', 'add', 'time']);
  });

  it('moves to a free port when the one in the URL is taken', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', () => r()));
    const port = (taken.address() as { port: number }).port;
    try {
      const [moved] = await demoServers().apply([mcpObject('two', `http://127.0.0.1:${port}/mcp`)]);
      const url = moved?.kind === 'MCPServer' ? moved.spec.url : '';
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
      expect(url).not.toContain(`:${port}/`);
      expect((await listTools(url, 'auto')).tools).toEqual(['echo', 'add', 'time']);
    } finally {
      await new Promise<void>((r) => taken.close(() => r()));
    }
  });

  it('time answers from the injected clock', async () => {
    const s = await startDemoMcpServer({ now: () => new Date('2030-05-06T07:08:09Z') });
    try {
      const { time } = await listTools(s.url, 'auto');
      expect(time).toMatchObject({ content: [{ type: 'text', text: '2030-05-06T07:08:09.000Z' }] });
    } finally {
      await s.close();
    }
  });
});
