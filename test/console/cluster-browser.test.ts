/**
 * The console's cluster pages in chromium, through a real gateway whose Kubernetes-identity routes
 * talk to a real API server: a ServiceAccount token signs in, the project list holds only the
 * namespace the identity's Role allows, and an edit of a workflow Argo CD applied shows the YAML
 * and the command instead of a write. axe in light and dark.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient, loadKubeConfig } from '#operator/kube/index';
import { type Cluster, startCluster } from '../harness/cluster.ts';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { baseConfig, NS, project } from '../harness/manifests.ts';
import { accessibilityProblems, launch, openPage, type Watched } from './browser.ts';
import { CONSOLE_DIR, ensureBundle } from './bundle.ts';
import { root } from './helpers.ts';

const SYSTEM = 'switchyard-system';
const ELSEWHERE = 'elsewhere';
let cluster: Cluster;
let gw: RunningGateway;
let browser: Browser;
let dir: string;
const opened: Watched[] = [];

async function kubectl(args: string[], input?: string): Promise<string> {
  const r = await cluster.kubectl(args, input === undefined ? {} : { input });
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}
const tokenOf = async (sa: string, ns: string) =>
  (await kubectl(['create', 'token', sa, '-n', ns, '--duration=1h'])).trim();

beforeAll(async () => {
  await ensureBundle();
  [cluster, browser] = await Promise.all([startCluster({ controllerManager: false }), launch()]);
  dir = await mkdtemp(join(tmpdir(), 'sy-console-cluster-web-'));
  await kubectl(['apply', '--server-side', '-f', `${root}/crds/`]);
  await kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
  for (const ns of [SYSTEM, NS, ELSEWHERE]) await kubectl(['create', 'namespace', ns]);
  for (let i = 0; (await cluster.kubectl(['get', 'workflows', '-n', NS])).code !== 0; i++)
    if (i > 100) throw new Error('workflows never became listable');
  for (const f of ['serviceaccount', 'clusterrole', 'bindings', 'console-identity-clusterrole'])
    await kubectl(['apply', '-n', SYSTEM, '-f', `${root}/operator/rbac/gateway-${f}.yaml`]);
  await kubectl(['create', 'serviceaccount', 'alice', '-n', NS]);
  await kubectl([
    'create',
    'role',
    'wf-edit',
    '-n',
    NS,
    '--verb=get,list,patch,create',
    '--resource=workflows.switchyard.dev',
  ]);
  await kubectl([
    'create',
    'rolebinding',
    'alice',
    '-n',
    NS,
    '--role=wf-edit',
    `--serviceaccount=${NS}:alice`,
  ]);
  await kubectl(
    ['apply', '--server-side', '--field-manager=argocd-controller', '-f', '-'],
    JSON.stringify({
      apiVersion: 'switchyard.dev/v1alpha1',
      kind: 'Workflow',
      metadata: { name: 'gitops-chat', namespace: NS },
      spec: { projectRef: { name: 'app' }, name: 'gitops-chat', provider: 'oai', model: 'gpt-4o-mini' },
    }),
  );
  await kubectl(
    ['apply', '--server-side', '--field-manager=switchyard-console', '-f', '-'],
    JSON.stringify({
      apiVersion: 'switchyard.dev/v1alpha1',
      kind: 'Workflow',
      metadata: { name: 'console-chat', namespace: NS },
      spec: { projectRef: { name: 'app' }, name: 'console-chat', provider: 'oai', model: 'gpt-4o-mini' },
    }),
  );
  const admin = JSON.parse(await kubectl(['config', 'view', '--raw', '--minify', '-o', 'json'])) as {
    clusters: { cluster: Record<string, unknown> }[];
  };
  const kubeconfig = join(dir, 'kubeconfig');
  await writeFile(
    kubeconfig,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: admin.clusters[0]?.cluster }],
      users: [{ name: 'gw', user: { token: await tokenOf('switchyard-gateway', SYSTEM) } }],
      contexts: [{ name: 'gw', context: { cluster: 'c', user: 'gw' } }],
      'current-context': 'gw',
    }),
  );
  gw = await startGateway([...baseConfig('http://127.0.0.1:9'), project('remote', {}, ELSEWHERE)], {
    consoleWeb: { dir: CONSOLE_DIR, identities: { client: new KubeClient(loadKubeConfig(kubeconfig)) } },
  });
}, 600_000);

afterAll(async () => {
  for (const w of opened) await w.context.close().catch(() => {});
  await browser?.close();
  await gw?.close();
  await cluster?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the cluster pages', () => {
  for (const scheme of ['light', 'dark'] as const)
    it(`sign in with a token, see only the allowed namespace, get YAML instead of a write (${scheme})`, async () => {
      const w = await openPage(browser, scheme);
      opened.push(w);
      const { page } = w;
      await page.goto(`${gw.url}/console/#/cluster`);
      await page.getByRole('heading', { name: 'Sign in with a Kubernetes identity' }).waitFor();
      expect(await accessibilityProblems(page)).toEqual([]);
      await page.getByLabel('Kubernetes token').fill(await tokenOf('alice', NS));
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Projects' }).waitFor();
      const projects = await page.locator('main li a').allTextContents();
      expect(projects).toEqual([`${NS}.app`, `${NS}.other`]);
      expect(await accessibilityProblems(page)).toEqual([]);

      await page.getByRole('link', { name: `${NS}.app` }).click();
      await page.getByRole('heading', { name: `Workflows of ${NS}.app` }).waitFor();
      await expect
        .poll(() => page.locator('tbody tr', { hasText: 'gitops-chat' }).textContent())
        .toContain('Argo CD (argocd-controller)');
      expect(await accessibilityProblems(page)).toEqual([]);

      await page.getByRole('link', { name: 'gitops-chat' }).click();
      await page.getByRole('heading', { name: 'Workflow gitops-chat' }).waitFor();
      await page.getByLabel('Primary model').fill('slow-300');
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.getByRole('heading', { name: /Not written/ }).waitFor();
      const shown = await page.locator('main').textContent();
      expect(shown).toMatch(/conflict with "argocd-controller": \.spec\.model/);
      expect(shown).toContain(
        'kubectl apply --server-side --field-manager=argocd-controller -f workflow-gitops-chat.yaml',
      );
      expect(shown).toContain('model: slow-300');
      expect(await accessibilityProblems(page)).toEqual([]);
      const stored = JSON.parse(
        await kubectl(['get', 'workflow', '-n', NS, 'gitops-chat', '-o', 'json']),
      ) as {
        spec: { model: string };
      };
      expect(stored.spec.model).toBe('gpt-4o-mini');

      // A workflow only the console applied is written, as switchyard-console.
      await page.goto(`${gw.url}/console/#/cluster/${NS}.app/console-chat`);
      await page.getByRole('heading', { name: 'Workflow console-chat' }).waitFor();
      await page.getByLabel('Primary model').fill(`model-${scheme}`);
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.getByText('Applied by switchyard-console.').waitFor();
      const applied = JSON.parse(
        await kubectl(['get', 'workflow', '-n', NS, 'console-chat', '-o', 'json', '--show-managed-fields']),
      ) as { spec: { model: string }; metadata: { managedFields: { manager: string }[] } };
      expect(applied.spec.model).toBe(`model-${scheme}`);
      expect(applied.metadata.managedFields.map((m) => m.manager)).toEqual(['switchyard-console']);
      expect(await w.violations()).toEqual([]);
      expect(w.problems).toEqual([]);
    });
});
