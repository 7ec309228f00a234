/**
 * `make run` as a user runs it, seen from an MCP client: the embedded entry point serves the
 * example folder, whose MCPServer is the built-in demo server, and its tools come through /v1/mcp
 * under the example key, priced and logged.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, expect, it } from 'vitest';

const KEY = 'sy_live_HEUADsAxMSNV8on9X3NkkU2lkBArrZ1v';
const NODE = join(process.cwd(), 'node_modules/.bin/node');
let dir: string;
let child: ChildProcess;
let output = '';
let base = '';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'switchyard-mcp-run-'));
  await cp('examples', dir, { recursive: true });
  child = spawn(
    NODE,
    [
      '--disable-warning=ExperimentalWarning',
      'embedded/main.ts',
      '--config',
      dir,
      '--port',
      '0',
      '--metrics-port',
      '0',
    ],
    {
      env: { ...process.env, LOG_LEVEL: 'warn' },
    },
  );
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const until = Date.now() + 30_000;
  for (;;) {
    const m = output.match(/API:\s+(http:\/\/localhost:\d+)/);
    if (m) {
      base = m[1]!;
      break;
    }
    if (Date.now() > until) throw new Error(`embedded mode did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}, 60_000);
afterAll(async () => {
  child?.kill('SIGTERM');
  if (dir) await rm(dir, { recursive: true, force: true });
});

it('the example key lists and calls the demo server’s tools at /v1/mcp; the priced call is logged with its price', async () => {
  const client = new Client({ name: 'make-run', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${base}/v1/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${KEY}` } },
    }),
  );
  const names = (await client.listTools()).tools.map((t) => t.name);
  const sum = await client.callTool({ name: 'demo__add', arguments: { a: 20, b: 22 } });
  await client.close();
  console.log(
    `make run over MCP: tools ${names.join(', ')}; demo__add answered ${JSON.stringify(sum.content)}`,
  );
  expect(names).toEqual(expect.arrayContaining(['demo__echo', 'demo__add', 'demo__time']));
  expect(JSON.stringify(sum.content)).toContain('42');
  let entry: Record<string, unknown> | undefined;
  for (let i = 0; i < 50 && !entry; i++) {
    const res = await fetch(`${base}/v1/request-logs?type=tool_call`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    entry = ((await res.json()) as { data: Record<string, unknown>[] }).data[0];
    if (!entry) await new Promise((r) => setTimeout(r, 50));
  }
  expect(entry).toMatchObject({
    type: 'tool_call',
    outcome: 'success',
    used_model: 'add',
    cost_usd: '0.001',
  });
}, 60_000);
