/**
 * The reference server `@modelcontextprotocol/server-everything` (Streamable HTTP mode, its own
 * process) behind /v1/mcp, with the v2 client negotiating the era on its own (`auto`) and the v1
 * client in the legacy era: its catalogue comes through prefixed, its tools answer.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as TransportV2,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '#devkit/ports';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { apiKey, mcpServer, project } from '../harness/manifests.ts';

const KEY = 'sy_live_EverythingMcpKey0123456789abcdefgh';
const ENTRY = resolve(
  import.meta.dirname,
  '../../node_modules/@modelcontextprotocol/server-everything/dist/index.js',
);
let child: ChildProcess;
let gw: RunningGateway;

beforeAll(async () => {
  const port = await freePort();
  child = spawn(process.execPath, [ENTRY, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((ready, fail) => {
    const timer = setTimeout(() => fail(new Error('server-everything did not start')), 20_000);
    child.stderr?.on('data', (d: Buffer) => {
      if (d.toString().includes('listening on port')) {
        clearTimeout(timer);
        ready();
      }
    });
  });
  gw = await startGateway([
    project('app', { outboundFetch: { allowPrivateNetworks: true } }),
    ...apiKey('k', KEY, { scopes: ['mcp'], toolGrants: ['ev__*'] }),
    ...mcpServer('everything', `http://127.0.0.1:${port}/mcp`, { spec: { toolPrefix: 'ev' } }),
  ]);
}, 60_000);
afterAll(async () => {
  await gw?.close();
  child?.kill('SIGTERM');
});

it('its tools, resources and prompts through the gateway, for the v2 (auto) and v1 clients', async () => {
  const v2 = new ClientV2({ name: 'v2', version: '1' }, { versionNegotiation: { mode: 'auto' } });
  await v2.connect(
    new TransportV2(new URL(`${gw.url}/v1/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${KEY}` } },
    }),
  );
  const { tools } = await v2.listTools();
  const echo = await v2.callTool({ name: 'ev__echo', arguments: { message: 'through' } });
  const v1 = new Client({ name: 'v1', version: '1' });
  await v1.connect(
    new StreamableHTTPClientTransport(new URL(`${gw.url}/v1/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${KEY}` } },
    }),
  );
  const { resources } = await v1.listResources();
  const { prompts } = await v1.listPrompts();
  const sum = await v1.callTool({ name: 'ev__get-sum', arguments: { a: 2, b: 40 } });
  console.log(
    `server-everything: v2 negotiated ${v2.getNegotiatedProtocolVersion()}, ${tools.length} tools, ` +
      `${resources.length} resources, ${prompts.length} prompts through the gateway`,
  );
  expect(tools.length).toBeGreaterThan(5);
  expect(tools.every((t) => t.name.startsWith('ev__'))).toBe(true);
  expect(JSON.stringify(echo.content)).toContain('through');
  expect(JSON.stringify(sum.content)).toContain('42');
  expect(resources.length).toBeGreaterThan(0);
  expect(prompts.length).toBeGreaterThan(0);
  await v2.close();
  await v1.close();
}, 60_000);
