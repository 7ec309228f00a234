/**
 * Sessions that survive pod loss: three gateway processes on one Redis behind a round-robin
 * "load balancer" (a fetch that spreads requests over the live pods). A legacy session opened on
 * one pod is continued on the others; that pod is SIGKILLed mid-session; the client's next calls
 * succeed on the survivors with the same session id. And a `list_changed` from an upstream reaches
 * the GET streams held on every pod.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fleet, type FleetGateway, startFleet } from '#devkit/fleet';
import { spendCap } from '../spend/manifests.ts';
import { MCP_KEY, manifests, rawPost } from './helpers.ts';
import { startUpstream, type Upstream } from './upstream.ts';

let fleet: Fleet;
let alpha: Upstream;
let beta: Upstream;

beforeAll(async () => {
  alpha = await startUpstream('alpha');
  beta = await startUpstream('beta');
  fleet = await startFleet({
    manifests: manifests(alpha.url, beta.url),
    gateways: 3,
    redis: 'single',
    env: { LOG_LEVEL: 'warn' },
  });
}, 60_000);

afterAll(async () => {
  await fleet?.stop();
  await alpha?.close();
  await beta?.close();
});

/** Sends each request to the next live pod (the first one to `first`), as a Service would. */
function balancer(pods: FleetGateway[], first: FleetGateway) {
  let next = 0;
  let opened = false;
  const served = new Map<number, number>();
  const fetchVia = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const live = pods.filter((p) => p.running);
    const pod = opened ? live[next++ % live.length]! : first;
    opened = true;
    served.set(pod.index, (served.get(pod.index) ?? 0) + 1);
    const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
    return fetch(`${pod.url}${url.pathname}`, init);
  };
  return { fetchVia, served };
}

function client(
  fetchVia: (i: string | URL | Request, init?: RequestInit) => Promise<Response>,
  endpoint: string,
) {
  const c = new Client({ name: 'fleet', version: '1' });
  const t = new StreamableHTTPClientTransport(new URL(endpoint), {
    fetch: fetchVia,
    requestInit: { headers: { authorization: `Bearer ${MCP_KEY}` } },
  });
  return { c, t };
}

describe('MCP sessions across three gateway processes', () => {
  it('a legacy session continues on every pod and survives SIGKILL of the pod that opened it', async () => {
    const [first] = fleet.gateways;
    const lb = balancer(fleet.gateways, first!);
    const { c, t } = client(lb.fetchVia, `${first!.url}/v1/mcp`);
    await c.connect(t);
    const sessionId = t.sessionId;
    let before = 0;
    for (let i = 0; i < 12; i++) {
      const out = await c.callTool({ name: 'alpha__echo', arguments: { text: `b${i}` } });
      expect(out.content).toEqual([{ type: 'text', text: `alpha:b${i}` }]);
      before++;
    }
    const servedBefore = Object.fromEntries(lb.served);
    await first!.kill('SIGKILL');
    let after = 0;
    let failed = 0;
    for (let i = 0; i < 12; i++) {
      try {
        const out = await c.callTool({ name: 'beta__add', arguments: { a: i, b: 1 } });
        expect(out.structuredContent).toEqual({ sum: i + 1 });
        after++;
      } catch {
        failed++;
      }
    }
    const tools = await c.listTools();
    console.log(
      `MCP session over 3 pods: ${before} calls before SIGKILL of pod 0 (served per pod ${JSON.stringify(servedBefore)}), ` +
        `${after} succeeded after it and ${failed} failed, same session id: ${t.sessionId === sessionId}, ` +
        `${tools.tools.length} tools listed after the kill`,
    );
    expect(t.sessionId).toBe(sessionId);
    expect(Object.keys(servedBefore).length).toBe(3);
    expect(after).toBe(12);
    expect(failed).toBe(0);
    await c.close();
    await first!.restart();
  }, 60_000);

  it('a list_changed from an upstream reaches the GET streams held on every pod', async () => {
    const clients = [];
    const heard = [0, 0, 0];
    for (const pod of fleet.gateways) {
      const { c, t } = client((i, init) => fetch(i, init), `${pod.url}/v1/mcp`);
      c.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
        heard[pod.index]!++;
      });
      await c.connect(t);
      await c.listTools();
      clients.push(c);
    }
    // Each pod's stream is open once its first keep-alive frame could have been sent; the
    // upstream announces a new tool to every session it holds.
    await new Promise((r) => setTimeout(r, 300));
    alpha.addTool('fresh');
    const deadline = Date.now() + 10_000;
    while (heard.some((n) => n === 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    console.log(`list_changed heard on pods 0, 1, 2: ${heard.join(', ')}`);
    expect(heard.every((n) => n >= 1)).toBe(true);
    const names = (await clients[2]!.listTools()).tools.map((t) => t.name);
    expect(names).toContain('alpha__fresh');
    for (const c of clients) await c.close();
  }, 60_000);
});

describe('a tool budget across three gateway processes', () => {
  it('3 × 100 concurrent $0.01 calls against a $1 cap: overshoot at most one call’s price', async () => {
    const published = await fleet.publish([
      ...manifests(alpha.url, beta.url, { alphaSpec: { tools: [{ name: 'add', priceUsd: '0.01' }] } }),
      spendCap('tools', { period: 'daily', limitUsd: '1.00' }),
    ]);
    for (const pod of fleet.gateways)
      for (let i = 0; i < 100; i++) {
        const metrics = await (await fetch(`${pod.metricsUrl}/metrics`)).text();
        if (metrics.includes(`version="${published.version}"`)) break;
        await new Promise((r) => setTimeout(r, 50));
      }
    const before = alpha.calls.get('add') ?? 0;
    const META = {
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': {},
      'io.modelcontextprotocol/clientInfo': { name: 'budget', version: '1' },
    };
    const call = (pod: FleetGateway, i: number) =>
      rawPost(
        `${pod.url}/v1/mcp`,
        JSON.stringify({
          jsonrpc: '2.0',
          id: i,
          method: 'tools/call',
          params: { name: 'alpha__add', arguments: { a: i, b: 1 }, _meta: META },
        }),
        { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'alpha__add' },
      );
    const answers = await Promise.all(
      fleet.gateways.flatMap((pod) => Array.from({ length: 100 }, (_, i) => call(pod, i))),
    );
    const ok = answers.filter((a) => a.status === 200 && a.json?.result && !a.json.result.isError).length;
    const refused = answers.filter((a) => a.json?.result?.isError).length;
    const reached = (alpha.calls.get('add') ?? 0) - before;
    console.log(
      `tool budget over 3 pods: ${answers.length} calls, ${ok} charged ($${(ok * 0.01).toFixed(2)} of a $1.00 cap), ${refused} refused, ${reached} reached the upstream, statuses ${[...new Set(answers.map((a) => a.status))].join(',')}`,
    );
    expect(ok + refused).toBe(300);
    expect(reached).toBe(ok);
    expect(ok).toBeLessThanOrEqual(101);
    expect(ok).toBeGreaterThanOrEqual(90);
  }, 60_000);
});
