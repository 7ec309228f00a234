import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify as toYaml } from 'yaml';
import { type Cluster, startCluster } from '../harness/cluster.ts';

/**
 * The Guardrail CRD on a real kube-apiserver: it installs, the example applies, the CEL rules and
 * the schema refuse what the compiler would (naming the field or the rule), the defaults are
 * applied, and `kubectl get` prints its columns. (RE2 patterns are checked by the operator, not
 * here: CEL cannot run RE2; test/guardrails/compile.test.ts covers that.)
 */

const root = resolve(fileURLToPath(import.meta.url), '../../..');
const NS = `guardrail-crd-${process.pid}-${Date.now().toString(36)}`;
let cluster: Cluster;

const kubectl = (args: readonly string[], input?: string) =>
  cluster.kubectl(args, input === undefined ? { timeoutMs: 60_000 } : { input, timeoutMs: 60_000 });
const stringify = (doc: unknown): string => toYaml(doc, { version: '1.1' });
const guardrail = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'switchyard.dev/v1alpha1',
  kind: 'Guardrail',
  metadata: { name, namespace: NS },
  spec: { projectRef: { name: 'storefront' }, ...spec },
});
const card = { name: 'cards', type: 'card', mode: 'redact' };

beforeAll(async () => {
  cluster = await startCluster({ controllerManager: false });
  const crds = await kubectl(['apply', '--server-side', '-f', `${root}/crds/guardrails.switchyard.dev.yaml`]);
  expect(crds.code).toBe(0);
  await kubectl([
    'wait',
    '--for',
    'condition=established',
    '--timeout=60s',
    'crd',
    'guardrails.switchyard.dev',
  ]);
  await kubectl(['create', 'namespace', NS]);
  await kubectl(['create', 'namespace', 'acme']);
}, 45 * 60_000);
afterAll(async () => {
  await cluster?.stop();
}, 60_000);

describe('Guardrail CRD', () => {
  it('accepts the example and applies the defaults', async () => {
    const ex = await kubectl(['apply', '--server-side', '-f', `${root}/examples/80-guardrails.yaml`]);
    expect(ex.code, ex.stderr).toBe(0);
    const ok = await kubectl(
      ['apply', '--server-side', '-f', '-'],
      stringify(guardrail('plain', { rules: [card] })),
    );
    expect(ok.code, ok.stderr).toBe(0);
    const got = JSON.parse((await kubectl(['get', 'guardrail', 'plain', '-n', NS, '-o', 'json'])).stdout) as {
      spec: { scope: string; rules: { direction: string; enforced: boolean }[] };
    };
    expect(got.spec.scope).toBe('project');
    expect(got.spec.rules[0]).toMatchObject({ direction: 'both', enforced: false });
    const table = await kubectl(['get', 'guardrails', '-n', NS]);
    expect(table.stdout.split('\n')[0]).toMatch(/^NAME\s+PROJECT\s+SCOPE\s+RULES\s+READY\s+AGE/);
  });

  it.each([
    [
      'an enforced rule below the project',
      { scope: 'workflows', workflowRefs: [{ name: 'w' }], rules: [{ ...card, enforced: true }] },
      'enforced rules are only allowed on a project-scope Guardrail',
    ],
    [
      'workflows scope without workflowRefs',
      { scope: 'workflows', rules: [card] },
      'a workflows-scope Guardrail needs workflowRefs',
    ],
    [
      'keys scope without apiKeyRefs',
      { scope: 'keys', rules: [card] },
      'a keys-scope Guardrail needs apiKeyRefs',
    ],
    [
      'a pattern rule without label',
      { rules: [{ name: 'p', type: 'pattern', mode: 'block', pattern: 'x{1,3}' }] },
      'a pattern rule needs pattern and label',
    ],
    [
      'a webhook rule without url',
      { rules: [{ name: 'w', type: 'webhook', mode: 'block' }] },
      'a webhook rule needs url',
    ],
    [
      'two rules of the same name',
      { rules: [card, { ...card, type: 'email' }] },
      'duplicate entries for key [name="cards"]',
    ],
    ['an unknown detector type', { rules: [{ ...card, type: 'ssn' }] }, 'spec.rules[0].type'],
    ['an unknown mode', { rules: [{ ...card, mode: 'warn' }] }, 'spec.rules[0].mode'],
  ])('refuses %s', async (_what, spec, message) => {
    const r = await kubectl(['apply', '--server-side', '-f', '-'], stringify(guardrail('bad', spec)));
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(message);
  });
});
