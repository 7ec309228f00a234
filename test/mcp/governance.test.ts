/**
 * Every tool call recorded and governed: a `tool_call` request-log entry (server, tool, argument
 * size, duration, outcome, cost), usage under `mcp:<server>`, Prometheus metrics, the server's
 * calls-per-minute limit through the gateway's limiter, and prices through the spend caps.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { apiKey, mcpServer, project } from '../harness/manifests.ts';
import { spendCap } from '../spend/manifests.ts';
import { startUpstream, type Upstream } from './upstream.ts';

const KEY = 'sy_live_GovernedMcpKey0123456789abcdefghij';

let alpha: Upstream;
let beta: Upstream;
let gw: RunningGateway;

beforeAll(async () => {
  alpha = await startUpstream('alpha');
  beta = await startUpstream('beta');
  gw = await startGateway([
    project('app', { outboundFetch: { allowPrivateNetworks: true } }),
    ...apiKey('ops', KEY, { scopes: ['mcp', 'console'], toolGrants: ['*'] }),
    spendCap('tools', { period: 'daily', limitUsd: '1.00' }),
    ...mcpServer('alpha', alpha.url, {
      spec: { toolPrefix: 'alpha', tools: [{ name: 'add', priceUsd: '0.3' }] },
    }),
    ...mcpServer('beta', beta.url, { spec: { toolPrefix: 'beta', callsPerMinute: 5 } }),
  ]);
});
afterAll(async () => {
  await gw?.close();
  await alpha?.close();
  await beta?.close();
});

async function connect(): Promise<Client> {
  const client = new Client({ name: 'gov', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${gw.url}/v1/mcp`), {
      requestInit: { headers: { authorization: `Bearer ${KEY}` } },
    }),
  );
  return client;
}

const textOf = (r: object): string => (r as { content?: { text?: string }[] }).content?.[0]?.text ?? '';

describe('governed tool calls', () => {
  it('a request-log entry per call, with server, tool, sizes, outcome and cost; usage and metrics', async () => {
    const client = await connect();
    await client.callTool({ name: 'beta__echo', arguments: { text: 'logged' } });
    await client.callTool({ name: 'alpha__add', arguments: { a: 1, b: 2 } });
    await client.close();
    let entries: Record<string, unknown>[] = [];
    for (let i = 0; i < 50 && entries.length < 2; i++) {
      const res = await fetch(`${gw.url}/v1/request-logs?type=tool_call`, {
        headers: { authorization: `Bearer ${KEY}` },
      });
      entries = ((await res.json()) as { data: Record<string, unknown>[] }).data;
      if (entries.length < 2) await new Promise((r) => setTimeout(r, 20));
    }
    const echo = entries.find((e) => (e.details as { tool?: string }).tool === 'echo');
    expect(echo).toMatchObject({
      type: 'tool_call',
      surface: 'mcp',
      api_key_id: 'team/ops',
      status: 'success',
      outcome: 'success',
      used_provider: 'mcp:beta',
      used_model: 'echo',
      cost_usd: '0',
      details: { server: 'beta', tool: 'echo', name: 'beta__echo', argument_bytes: 17 },
    });
    expect(echo?.bodies).toBeUndefined();
    expect(entries.find((e) => (e.details as { tool?: string }).tool === 'add')).toMatchObject({
      cost_usd: '0.3',
    });
    const metrics = await (await fetch(`${gw.metricsUrl}/metrics`)).text();
    expect(metrics).toMatch(
      /switchyard_mcp_tool_calls_total\{project="team\.app",server="beta",tool="echo",outcome="success"\} 1/,
    );
    expect(metrics).toMatch(/switchyard_mcp_tool_cost_usd_total\{project="team\.app",server="alpha"\} 0\.3/);
  });

  it('a server’s callsPerMinute refuses the calls past it before they reach the upstream', async () => {
    const client = await connect();
    const before = beta.calls.get('echo') ?? 0;
    const results = [];
    // One call already went to beta above; the limit is 5 a minute with a burst of 5.
    for (let i = 0; i < 6; i++)
      results.push(await client.callTool({ name: 'beta__echo', arguments: { text: `r${i}` } }));
    const refused = results.filter((r) => r.isError);
    console.log(
      `callsPerMinute 5: ${results.length - refused.length} of ${results.length} calls passed, ${refused.length} refused`,
    );
    expect(results.length - refused.length).toBe(4);
    expect(textOf(refused[0]!)).toMatch(/Rate limit of 5 calls per minute for MCP server "beta" reached/);
    expect((beta.calls.get('echo') ?? 0) - before).toBe(4);
    await client.close();
  });

  it('a $1 cap with $0.30 calls in parallel: spent stays within one call’s price of the cap', async () => {
    const client = await connect();
    const before = alpha.calls.get('add') ?? 0;
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        client.callTool({ name: 'alpha__add', arguments: { a: i, b: 0 } }),
      ),
    );
    const passed = results.filter((r) => !r.isError).length;
    const reached = (alpha.calls.get('add') ?? 0) - before;
    // One $0.30 call was made in the first test.
    const spent = 0.3 * (passed + 1);
    console.log(
      `$1 cap, $0.30 a call: ${passed + 1} calls charged ($${spent.toFixed(2)}), ${20 - passed} refused, ${reached} reached the upstream`,
    );
    expect(reached).toBe(passed);
    expect(spent).toBeLessThanOrEqual(1.3 + 1e-9);
    expect(spent).toBeGreaterThanOrEqual(0.7 - 1e-9);
    const refused = results.find((r) => r.isError);
    expect(textOf(refused!)).toMatch(/spend cap of \$1\.00 is reached/);
    await client.close();
  });
});
