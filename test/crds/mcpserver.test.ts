/**
 * The MCPServer CRD and ApiKey.toolGrants on a real kube-apiserver: the schema and CEL rules refuse
 * what zod refuses (naming the field), the server applies the defaults, `kubectl explain` shows the
 * descriptions, `kubectl get` prints the columns.
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { type Cluster, startCluster } from '../harness/cluster.ts';

const root = resolve(fileURLToPath(import.meta.url), '../../..');
const NS = `crd-mcp-${process.pid}-${Date.now().toString(36)}`;
let cluster: Cluster;

const kubectl = (args: readonly string[], input?: string) =>
  cluster.kubectl(args, input === undefined ? { timeoutMs: 60_000 } : { input, timeoutMs: 60_000 });
async function ok(args: readonly string[], input?: string): Promise<string> {
  const r = await kubectl(args, input);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}):\n${r.stderr}`);
  return r.stdout;
}

const mcp = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'switchyard.dev/v1alpha1',
  kind: 'MCPServer',
  metadata: { name, namespace: NS },
  spec: { projectRef: { name: 'p' }, url: 'https://mcp.example.com/mcp', ...spec },
});

beforeAll(async () => {
  cluster = await startCluster({ controllerManager: false });
  await ok(['apply', '--server-side', '-f', `${root}/crds/`]);
  await ok(['wait', '--for', 'condition=established', '--timeout=60s', 'crd', 'mcpservers.switchyard.dev']);
  await ok(['create', 'namespace', NS]);
}, 45 * 60_000);

afterAll(async () => {
  if (cluster && !cluster.started) await kubectl(['delete', 'namespace', NS, '--wait=false']);
  await cluster?.stop();
}, 60_000);

describe('MCPServer CRD', () => {
  it('applies the defaults', async () => {
    await ok(['apply', '-f', '-'], stringify(mcp('defaults', {})));
    const o = JSON.parse(await ok(['get', 'mcpserver', 'defaults', '-n', NS, '-o', 'json'])) as {
      spec: Record<string, unknown>;
    };
    expect(o.spec).toMatchObject({
      timeoutMs: 30_000,
      denyTools: [],
      tools: [],
      allowPrivateNetworks: false,
    });
  });

  it.each([
    [
      'bearer and header at once',
      {
        credentials: {
          bearer: { secretRef: { name: 's' } },
          header: { headerName: 'X-Key', secretRef: { name: 's' } },
        },
      },
      'credentials must name exactly one of bearer or header',
    ],
    ['no credential named', { credentials: {} }, 'credentials must name exactly one of bearer or header'],
    [
      'a header the gateway sets',
      { credentials: { header: { headerName: 'MCP-Protocol-Version', secretRef: { name: 's' } } } },
      'headerName must not be one the gateway sets itself',
    ],
    ['a prefix with the separator', { toolPrefix: 'a__b' }, 'toolPrefix must not contain "__"'],
    ['a prefix too long', { toolPrefix: 'p'.repeat(33) }, 'spec.toolPrefix'],
    ['a non-http URL', { url: 'file:///etc/passwd' }, 'spec.url'],
    ['a glob with a slash', { allowTools: ['a/b'] }, 'spec.allowTools[0]'],
    ['a price in exponent form', { tools: [{ name: 't', priceUsd: '1e3' }] }, 'spec.tools[0].priceUsd'],
    ['a timeout over ten minutes', { timeoutMs: 600_001 }, 'spec.timeoutMs'],
    ['a tool listed twice', { tools: [{ name: 't' }, { name: 't' }] }, 'spec.tools[1]'],
  ])('refuses %s', async (_what, spec, message) => {
    const r = await kubectl(['apply', '-f', '-'], stringify(mcp('bad', spec)));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(message);
  });

  it('ApiKey toolGrants: patterns accepted, anything else refused', async () => {
    const key = (grants: string[]) =>
      stringify({
        apiVersion: 'switchyard.dev/v1alpha1',
        kind: 'ApiKey',
        metadata: { name: 'agents', namespace: NS },
        spec: { projectRef: { name: 'p' }, scopes: ['mcp'], toolGrants: grants },
      });
    await ok(['apply', '-f', '-'], key(['gh__search_*', 'demo__*']));
    const r = await kubectl(['apply', '-f', '-'], key(['gh/*']));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('spec.toolGrants[0]');
  });

  it('kubectl explain describes every field', async () => {
    const explain = async (path: string) => (await ok(['explain', path])).replace(/\s+/g, ' ');
    expect(await explain('mcpserver.spec.credentials')).toContain('exactly one of the fields');
    expect(await explain('mcpserver.spec.toolPrefix')).toContain('<toolPrefix>__<name>');
    expect(await explain('mcpserver.spec.allowPrivateNetworks')).toContain('for this server only');
    expect(await explain('mcpserver.status.catalogueHash')).toContain('SHA-256');
    expect(await explain('apikey.spec.toolGrants')).toContain('needs the mcp scope');
  });

  it('kubectl get prints project, URL, prefix, tools, reachable, ready', async () => {
    const header = (await ok(['get', 'mcpservers', '-n', NS])).split('\n')[0] ?? '';
    expect(header.split(/\s+/)).toEqual([
      'NAME',
      'PROJECT',
      'URL',
      'PREFIX',
      'TOOLS',
      'REACHABLE',
      'READY',
      'AGE',
    ]);
    const wide = (await ok(['get', 'mcpservers', '-n', NS, '-o', 'wide'])).split('\n')[0] ?? '';
    expect(wide).toContain('PROTOCOL');
  });
});
