/** Scale: 50 projects, 1,000 workflows and 200 keys compile, publish and serve; prints the latency. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RunningOperator } from '#operator/operator';
import { ask, type Env, type FollowingGateway, metricValue, startEnv, waitFor } from './helpers.ts';

const PROJECTS = 50;
const WORKFLOWS_PER_PROJECT = 20;
const KEYS_PER_PROJECT = 4;
const NS = 'scale';

let env: Env;
let op: RunningOperator;
let gw: FollowingGateway;

beforeAll(async () => {
  env = await startEnv();
  op = await env.operator();
  gw = await env.gateway();
}, 600_000);

afterAll(async () => {
  await env?.stop();
});

const keyOf = (p: number, k: number) =>
  `sy_live_scale${String(p).padStart(3, '0')}k${k}xxxxxxxxxxxxxxxxxxxxxxxx`;

function projectYaml(p: number): string {
  const docs = [
    `apiVersion: switchyard.dev/v1alpha1\nkind: Project\nmetadata: {name: p${p}, namespace: ${NS}}\nspec: {displayName: "Project ${p}"}`,
  ];
  for (let w = 0; w < WORKFLOWS_PER_PROJECT; w++)
    docs.push(
      `apiVersion: switchyard.dev/v1alpha1\nkind: Workflow\nmetadata: {name: p${p}-wf${w}, namespace: ${NS}}\nspec: {projectRef: {name: p${p}}, name: wf${w}, provider: openai, model: gpt-4o-mini, backups: [{provider: openai, model: gpt-4o}], testMode: true}`,
    );
  for (let k = 0; k < KEYS_PER_PROJECT; k++)
    docs.push(
      `apiVersion: v1\nkind: Secret\nmetadata: {name: p${p}-k${k}, namespace: ${NS}}\nstringData: {apiKey: ${keyOf(p, k)}}`,
      `apiVersion: switchyard.dev/v1alpha1\nkind: ApiKey\nmetadata: {name: p${p}-k${k}, namespace: ${NS}}\nspec: {projectRef: {name: p${p}}, secretRef: {name: p${p}-k${k}}}`,
    );
  return docs.join('\n---\n');
}

it('50 projects, 1,000 workflows and 200 keys: last apply → gateway serving the last object', async () => {
  await env.apply(`
apiVersion: v1
kind: Namespace
metadata: {name: ${NS}}
---
apiVersion: v1
kind: Secret
metadata: {name: openai, namespace: ${NS}}
stringData: {apiKey: sk-scale}
---
apiVersion: switchyard.dev/v1alpha1
kind: Provider
metadata: {name: openai, namespace: ${NS}}
spec:
  type: openai
  credentials: {secretRef: {name: openai}}
  models:
    - {name: gpt-4o-mini, requestTypes: [chat]}
    - {name: gpt-4o, requestTypes: [chat]}
`);
  const started = Date.now();
  // Five parallel `kubectl apply --server-side` streams of ten projects each; the last project last.
  const batches: string[][] = [[], [], [], [], []];
  for (let p = 0; p < PROJECTS - 1; p++) batches[p % 5]?.push(projectYaml(p));
  await Promise.all(
    batches.map((b) => env.kubectl(['apply', '--server-side', '-f', '-'], b.join('\n---\n'))),
  );
  await env.kubectl(['apply', '--server-side', '-f', '-'], projectYaml(PROJECTS - 1));
  const lastApply = Date.now();
  const lastKey = keyOf(PROJECTS - 1, KEYS_PER_PROJECT - 1);
  const lastWf = `wf${WORKFLOWS_PER_PROJECT - 1}`;
  await waitFor(
    'the gateway serves the last object',
    async () => (await ask(gw.url, lastKey, lastWf)).status === 200,
    60_000,
    20,
  );
  const served = Date.now() - lastApply;

  const snap = await env.snapshot();
  expect(Object.keys(snap?.projects ?? {})).toHaveLength(PROJECTS);
  const wfCount = Object.values(snap?.projects ?? {}).reduce(
    (n, p) => n + Object.keys(p.workflows).length,
    0,
  );
  expect(wfCount).toBe(PROJECTS * WORKFLOWS_PER_PROJECT);
  expect(Object.keys(snap?.apiKeys ?? {})).toHaveLength(PROJECTS * KEYS_PER_PROJECT);

  await waitFor(
    'every workflow status Ready',
    async () => {
      const out = await env.kubectl([
        'get',
        'workflows',
        '-n',
        NS,
        '-o',
        'jsonpath={.items[*].status.conditions[0].status}',
      ]);
      const statuses = out.split(/\s+/).filter(Boolean);
      return statuses.length === PROJECTS * WORKFLOWS_PER_PROJECT && statuses.every((s) => s === 'True');
    },
    60_000,
    500,
  );
  const allReady = Date.now() - lastApply;
  const bytes = await metricValue(op.metricsUrl, 'switchyard_operator_snapshot_size_bytes');
  console.log(
    `[operator scale] ${PROJECTS} projects, ${wfCount} workflows, ${PROJECTS * KEYS_PER_PROJECT} keys: ` +
      `applying took ${lastApply - started} ms; last apply → gateway serving the last object: ${served} ms; ` +
      `→ all workflow statuses Ready: ${allReady} ms; snapshot ${Math.round(bytes / 1024)} KiB; ` +
      `${op.controller.snapshotReconciles} snapshot reconciles`,
  );
  expect(served).toBeLessThan(10_000);
}, 180_000);
