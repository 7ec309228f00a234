/** Embedded mode reads MCPServer objects from the config folder like every other kind. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mcpHeaderSealContext, unseal } from '#contract';
import { compileSnapshot } from '#operator/compiler/index';
import { formatProblem, loadConfigFolder } from '#operator/load/folder';

const dirs: string[] = [];
afterAll(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

const YAML = `apiVersion: switchyard.dev/v1alpha1
kind: Project
metadata: {name: shop, namespace: acme}
---
apiVersion: v1
kind: Secret
metadata: {name: tools-token, namespace: acme}
stringData: {token: folder-token}
---
apiVersion: switchyard.dev/v1alpha1
kind: MCPServer
metadata: {name: tools, namespace: acme}
spec:
  projectRef: {name: shop}
  url: https://tools.example.com/mcp
  credentials: {bearer: {secretRef: {name: tools-token}}}
  tools:
    - {name: search, priceUsd: "0.01"}
---
apiVersion: switchyard.dev/v1alpha1
kind: MCPServer
metadata: {name: broken, namespace: acme}
spec:
  projectRef: {name: shop}
  url: https://tools.example.com/mcp
  toolPrefix: a__b
`;

describe('MCPServer in a config folder', () => {
  it('loads, compiles and seals like the operator does; a bad one is reported by field', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'switchyard-mcp-load-'));
    dirs.push(dir);
    await writeFile(join(dir, 'mcp.yaml'), YAML);
    const loaded = await loadConfigFolder(dir);
    expect(loaded.objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'Project/shop',
      'MCPServer/tools',
    ]);
    expect(loaded.problems.map(formatProblem)).toEqual([
      expect.stringMatching(
        /MCPServer acme\/broken: field spec\.toolPrefix: toolPrefix must not contain "__"/,
      ),
    ]);
    const sealKey = Buffer.alloc(32, 3);
    const { snapshot } = compileSnapshot({
      objects: loaded.objects,
      secrets: loaded.secrets,
      now: new Date(),
      sealKey,
    });
    const tools = snapshot.projects['acme.shop']?.mcpServers['tools'];
    expect(tools).toMatchObject({ toolPrefix: 'tools', tools: { search: { priceUsd: '0.01' } } });
    expect(
      unseal(sealKey, mcpHeaderSealContext('acme.shop', 'tools', 'authorization'), tools!.headers[0]!.value),
    ).toBe('Bearer folder-token');
  });
});
