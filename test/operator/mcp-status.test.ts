/**
 * MCPServer status written by the operator against a real API server: servers up (SDK v2 on
 * loopback, with a bearer credential), down, behind the SSRF guard and without their Secret; a
 * server that comes up, and a credential that changes, are picked up level-based.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningOperator } from '#operator/operator';
import { type DemoMcpServer, startDemoMcpServer } from '../../embedded/demo-mcp-server.ts';
import { type Cond, type Env, metricValue, startEnv, type WithStatus, waitFor } from './helpers.ts';

const NS = 'tools';
const TOKEN = 'mcp-status-test-token';

let env: Env;
let op: RunningOperator;
let standby: RunningOperator;
const FAST_LEASE = { leaseDurationMs: 3000, renewDeadlineMs: 2000, leaseRetryMs: 500 };
let up: DemoMcpServer;
let blockedTarget: DemoMcpServer;
let insideTarget: DemoMcpServer;
let late: DemoMcpServer | undefined;
let downPort: number;

type McpStatus = WithStatus & {
  status?: WithStatus['status'] & {
    toolCount?: number;
    offeredToolCount?: number;
    protocolVersion?: string;
    catalogueHash?: string;
    lastProbeTime?: string;
    toolPrefix?: string;
  };
};

const condition = (o: McpStatus, type: string): Cond | undefined =>
  o.status?.conditions?.find((c) => c.type === type);
const get = (name: string) => env.get<McpStatus>('mcpserver', NS, name);
const reachable = async (name: string, status: string, reason?: string) =>
  waitFor(
    `${name} Reachable=${status}${reason ? ` (${reason})` : ''}`,
    async () => {
      const o = await get(name);
      const c = condition(o, 'Reachable');
      return c?.status === status && (reason === undefined || c.reason === reason) ? o : undefined;
    },
    30_000,
    100,
  );

const server = (name: string, project: string, url: string, extra = '') => `
apiVersion: switchyard.dev/v1alpha1
kind: MCPServer
metadata: {name: ${name}, namespace: ${NS}}
spec:
  projectRef: {name: ${project}}
  url: ${url}
${extra}`;

beforeAll(async () => {
  up = await startDemoMcpServer({ requireAuthorization: `Bearer ${TOKEN}` });
  blockedTarget = await startDemoMcpServer();
  insideTarget = await startDemoMcpServer();
  // A port nothing listens on (yet): the "down" server comes up there later in the test.
  const probe = await startDemoMcpServer();
  downPort = Number(new URL(probe.url).port);
  await probe.close();
  env = await startEnv();
  op = await env.operator({ identity: 'mcp-a', mcpProbeMs: 1000, ...FAST_LEASE });
  await waitFor('A leads', () => op.isLeader, 15_000);
  standby = await env.operator({ identity: 'mcp-b', mcpProbeMs: 1000, ...FAST_LEASE });
  await env.apply(`
apiVersion: v1
kind: Namespace
metadata: {name: ${NS}}
---
apiVersion: switchyard.dev/v1alpha1
kind: Project
metadata: {name: lab, namespace: ${NS}}
spec: {outboundFetch: {allowPrivateNetworks: true}}
---
apiVersion: switchyard.dev/v1alpha1
kind: Project
metadata: {name: public, namespace: ${NS}}
---
apiVersion: v1
kind: Secret
metadata: {name: demo-token, namespace: ${NS}}
stringData: {token: ${TOKEN}}
---${server('demo', 'lab', up.url, '  credentials: {bearer: {secretRef: {name: demo-token}}}\n  denyTools: [time]')}
---${server('down', 'lab', `http://127.0.0.1:${downPort}/mcp`)}
---${server('blocked', 'public', blockedTarget.url)}
---${server('inside', 'public', insideTarget.url.replace('127.0.0.1', 'localhost'), '  allowPrivateNetworks: true')}
---${server('no-secret', 'lab', up.url, '  credentials: {bearer: {secretRef: {name: absent}}}')}
`);
}, 600_000);

afterAll(async () => {
  await env?.stop();
  await Promise.all([up?.close(), blockedTarget?.close(), insideTarget?.close(), late?.close()]);
});

describe('MCPServer status', () => {
  it('a reachable server: Reachable and Ready, protocol, tool counts, catalogue hash, probe time', async () => {
    const o = await reachable('demo', 'True', 'ToolsListed');
    console.log('demo status:', JSON.stringify(o.status));
    expect(condition(o, 'Ready')).toMatchObject({ status: 'True', reason: 'Valid' });
    expect(o.status).toMatchObject({
      toolPrefix: 'demo',
      toolCount: 3,
      offeredToolCount: 2,
      protocolVersion: '2026-07-28',
      catalogueHash: expect.stringMatching(/^[0-9a-f]{64}$/),
      lastProbeTime: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
    });
    expect(condition(o, 'Reachable')?.observedGeneration).toBe(o.metadata.generation);
    expect(up.lastHeaders['authorization']).toBe(`Bearer ${TOKEN}`);
    const table = await env.kubectl(['get', 'mcpservers', '-n', NS, 'demo']);
    console.log(table);
    expect(table.split('\n')[0]).toMatch(/^NAME\s+PROJECT\s+URL\s+PREFIX\s+TOOLS\s+REACHABLE\s+READY\s+AGE/);
    expect(table.split('\n')[1]).toMatch(
      /^demo\s+lab\s+http:\/\/127\.0\.0\.1:\d+\/mcp\s+demo\s+3\s+True\s+True/,
    );
  });

  it('a server that is down is Ready (the gateway serves the rest) but not Reachable', async () => {
    const o = await reachable('down', 'False', 'ConnectionFailed');
    expect(condition(o, 'Ready')?.status).toBe('True');
    expect(o.status?.toolCount).toBeUndefined();
    expect(o.status?.lastProbeTime).toBeDefined();
  });

  it('a loopback server of a project without allowPrivateNetworks: AddressBlocked, never contacted', async () => {
    const o = await reachable('blocked', 'False', 'AddressBlocked');
    expect(condition(o, 'Reachable')?.message).toContain('allowPrivateNetworks');
    expect(blockedTarget.calls.size).toBe(0);
  });

  it("the same kind of server with the MCPServer's own allowPrivateNetworks: reached (the project stays closed)", async () => {
    const o = await reachable('inside', 'True', 'ToolsListed');
    expect(o.status?.protocolVersion).toBe('2026-07-28');
    expect(insideTarget.calls.get('tools/list')).toBeGreaterThanOrEqual(1);
  });

  it('a server whose Secret is missing is not Ready and not probed', async () => {
    const o = await reachable('no-secret', 'Unknown', 'NotServed');
    expect(condition(o, 'Ready')).toMatchObject({ status: 'False', reason: 'SecretMissing' });
  });

  it('probes that find the same write no status: a quiet cluster stays quiet', async () => {
    await reachable('demo', 'True', 'ToolsListed');
    const writes = () =>
      metricValue(op.metricsUrl, 'switchyard_operator_status_writes_total', { kind: 'MCPServer' });
    const stamp = (await get('demo')).status?.lastProbeTime;
    // Settled: no MCPServer status write for a whole probe interval.
    let last = -1;
    await waitFor(
      'MCPServer status writes to settle',
      async () => {
        const n = await writes();
        const same = n === last;
        last = n;
        return same;
      },
      20_000,
      1500,
    );
    const probes = op.controller.mcp.probes;
    const before = await writes();
    await waitFor('three more probe rounds', () => op.controller.mcp.probes >= probes + 3 * 4, 20_000, 100);
    const after = await writes();
    console.log(
      `quiet: ${op.controller.mcp.probes - probes} probes, ${after - before} MCPServer status writes`,
    );
    expect(after - before).toBe(0);
    expect((await get('demo')).status?.lastProbeTime).toBe(stamp);
  });

  it('level-based: the down server comes up, and a changed credential is probed at once', async () => {
    late = await startDemoMcpServer({ port: downPort });
    const o = await reachable('down', 'True', 'ToolsListed');
    expect(o.status?.toolCount).toBe(3);
    const probesBefore = op.controller.mcp.probes;
    await env.apply(`
apiVersion: v1
kind: Secret
metadata: {name: demo-token, namespace: ${NS}}
stringData: {token: rotated-wrong-token}
`);
    const refused = await reachable('demo', 'False', 'Unauthorized');
    expect(refused.status?.toolCount).toBeUndefined();
    console.log(
      'probes run during the test:',
      op.controller.mcp.probes,
      'since the rotation:',
      op.controller.mcp.probes - probesBefore,
    );
    expect(op.controller.mcp.probes).toBeGreaterThan(probesBefore);
  });

  it("a server that hangs holds up neither publishing nor the other servers' probes", async () => {
    const hang = createServer(() => {}); // accepts, never answers
    await new Promise<void>((r) => hang.listen(0, '127.0.0.1', () => r()));
    const port = (hang.address() as AddressInfo).port;
    const connections = () => new Promise<number>((r) => hang.getConnections((_e, n) => r(n)));
    try {
      await env.apply(server('hang', 'lab', `http://127.0.0.1:${port}/mcp`, '  timeoutMs: 120000'));
      await waitFor(
        'the probe to be hanging on the server',
        async () => (await connections()) > 0,
        20_000,
        50,
      );
      const started = Date.now();
      await env.apply(`
apiVersion: switchyard.dev/v1alpha1
kind: Project
metadata: {name: later, namespace: ${NS}}
`);
      await waitFor(
        'the new project published',
        async () => (await env.snapshot())?.projects[`${NS}.later`],
        10_000,
        50,
      );
      const ms = Date.now() - started;
      console.log(`published in ${ms} ms while a probe hangs (${await connections()} connection(s) held)`);
      expect(await connections()).toBeGreaterThan(0);
      expect(ms).toBeLessThan(5000);
      // Meanwhile the other servers are probed again on their interval.
      const before = op.controller.mcp.probes;
      await waitFor('other servers probed again', () => op.controller.mcp.probes >= before + 2, 10_000, 50);
      expect(await connections()).toBeGreaterThan(0);
      const o = await get('hang');
      expect(condition(o, 'Ready')?.status).toBe('True');
      expect(condition(o, 'Reachable')).toMatchObject({ status: 'Unknown', reason: 'Probing' });
    } finally {
      await env.kubectl(['delete', 'mcpserver', '-n', NS, 'hang']);
      hang.closeAllConnections();
      hang.close();
    }
  });

  it('a deleted server is forgotten by the prober', async () => {
    await env.kubectl(['delete', 'mcpserver', '-n', NS, 'blocked']);
    await waitFor(
      'the prober forgets it',
      () => op.controller.mcp.get(`${NS}/blocked`) === undefined,
      20_000,
      100,
    );
    expect(op.controller.mcp.get(`${NS}/demo`)).toBeDefined();
  });

  it('leader killed: the standby takes over, the status stands (no Probing in between) and it probes again', async () => {
    const before = await reachable('inside', 'True', 'ToolsListed');
    const transition = (condition(before, 'Reachable') as Cond & { lastTransitionTime?: string })
      ?.lastTransitionTime;
    expect(standby.isLeader).toBe(false);
    expect(standby.controller.mcp.probes).toBe(0); // a standby never probes
    let polls = 0;
    const seen = new Set<string>();
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const c = condition(await get('inside'), 'Reachable');
        seen.add(`${c?.status}/${c?.reason}`);
        polls++;
      }
    })();
    await op.abort(); // like a SIGKILL: the Lease stays held until it expires
    await waitFor('the standby leads', () => standby.isLeader, 20_000, 50);
    await waitFor(
      'the new leader probed the server',
      () => standby.controller.mcp.get(`${NS}/inside`) !== undefined,
      20_000,
      50,
    );
    await waitFor(
      'its MCPServer statuses reconciled after the probe',
      async () =>
        (await metricValue(standby.metricsUrl, 'switchyard_operator_reconciles_total', {
          kind: 'McpProbe',
        })) > 0,
      20_000,
      100,
    );
    watching = false;
    await watcher;
    const after = await get('inside');
    console.log(
      `failover: ${polls} status reads, Reachable seen as ${[...seen].join(', ')}; new leader ran ${standby.controller.mcp.probes} probes`,
    );
    expect([...seen]).toEqual(['True/ToolsListed']);
    // Nothing changed, so the new leader wrote nothing for it: the observation, its time, its transition stand.
    expect(
      await metricValue(standby.metricsUrl, 'switchyard_operator_status_writes_total', { kind: 'MCPServer' }),
    ).toBe(0);
    expect(
      (condition(after, 'Reachable') as Cond & { lastTransitionTime?: string })?.lastTransitionTime,
    ).toBe(transition);
    expect(after.status?.lastProbeTime).toBe(before.status?.lastProbeTime);
  });
});
