/**
 * The MCP conformance suite (@modelcontextprotocol/conformance, server scenarios) against /v1/mcp,
 * in front of an SDK server. The suite's client sends no credentials, so a loopback proxy adds the
 * key's Authorization header, as a client configured with it would. Scenarios that need tools of
 * the suite's own reference server (by their unprefixed names) or server-to-client requests
 * (sampling, elicitation) are listed in the baseline file beside this test with the reason.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MCP_KEY, type McpEnv, startMcpEnv } from './helpers.ts';

const CLI = resolve(
  import.meta.dirname,
  '../../node_modules/@modelcontextprotocol/conformance/dist/index.js',
);
const BASELINE = resolve(import.meta.dirname, 'conformance-baseline.yml');

let env: McpEnv;
let proxy: Server;
let proxyUrl: string;
let out: string;

beforeAll(async () => {
  env = await startMcpEnv();
  const target = new URL(env.gw.url);
  proxy = createServer((req, res) => {
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        path: req.url,
        method: req.method,
        headers: { ...req.headers, authorization: `Bearer ${MCP_KEY}` },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/v1/mcp`;
  out = await mkdtemp(join(tmpdir(), 'switchyard-conformance-'));
});
afterAll(async () => {
  proxy?.closeAllConnections();
  await new Promise<void>((r) => (proxy ? proxy.close(() => r()) : r()));
  await env?.close();
  if (out) await rm(out, { recursive: true, force: true });
});

it('server scenarios pass, but for the baseline', async () => {
  const r = await new Promise<{ code: number; stdout: string; stderr: string }>((done) =>
    execFile(
      process.execPath,
      [CLI, 'server', '--url', proxyUrl, '--expected-failures', BASELINE, '-o', out],
      { timeout: 300_000, maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) =>
        done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    ),
  );
  const dirs = await readdir(out);
  let passed = 0;
  let failed = 0;
  for (const d of dirs) {
    const checks = JSON.parse(await readFile(join(out, d, 'checks.json'), 'utf8').catch(() => '[]')) as {
      status: string;
    }[];
    passed += checks.filter((c) => c.status === 'SUCCESS').length;
    failed += checks.filter((c) => c.status === 'FAILURE').length;
  }
  console.log(
    `conformance: ${dirs.length} scenarios, ${passed} checks passed, ${failed} failed\n${r.stdout.slice(-3000)}`,
  );
  expect(r.code, r.stdout + r.stderr).toBe(0);
}, 320_000);
