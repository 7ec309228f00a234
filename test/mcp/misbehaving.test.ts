/**
 * Upstreams that misbehave: a body that is not JSON, an endless (1 GiB) stream, one that hangs.
 * Each is a tool error naming the server, within bounded time and memory; the next call works.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type McpEnv, rawPost, startMcpEnv } from './helpers.ts';

let env: McpEnv;
beforeAll(async () => {
  env = await startMcpEnv();
});
afterAll(async () => {
  await env?.close();
});

const call = (name: string, args: Record<string, unknown> = {}) =>
  rawPost(
    env.endpoint,
    JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  );

it('garbage, a 1 GiB stream and a hang are tool errors naming the server; the gateway keeps serving', async () => {
  const rssBefore = process.memoryUsage().rss;
  const t0 = performance.now();
  const garbage = await call('alpha__garbage');
  const t1 = performance.now();
  const flood = await call('alpha__flood');
  const t2 = performance.now();
  const hang = await call('alpha__slow', { ms: 60_000 });
  const t3 = performance.now();
  const rssGrowth = (process.memoryUsage().rss - rssBefore) / 2 ** 20;
  console.log(
    `misbehaving upstream: garbage ${(t1 - t0).toFixed(0)} ms, 1 GiB stream ${(t2 - t1).toFixed(0)} ms, hang ${(t3 - t2).toFixed(0)} ms; ` +
      `statuses ${garbage.status}/${flood.status}/${hang.status}; rss grew ${rssGrowth.toFixed(0)} MiB`,
  );
  for (const r of [garbage, flood, hang]) {
    expect(r.status).toBe(200);
    expect(r.json?.result?.isError).toBe(true);
    expect(((r.json?.result?.content ?? []) as { text: string }[])[0]?.text).toMatch(/MCP server "alpha"/);
  }
  // The stream is cut off at 16 MiB, not read to its end.
  expect(t2 - t1).toBeLessThan(10_000);
  const ok = await call('alpha__echo', { text: 'after' });
  expect(ok.json?.result?.content).toEqual([{ type: 'text', text: 'alpha:after' }]);
}, 60_000);
