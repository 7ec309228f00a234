/**
 * The shared setup of the Kubernetes-identity suites: a real API server with the CRDs, the
 * console's identity routes on a Fastify app whose client holds nothing but the gateway's
 * ServiceAccount token bound to operator/rbac/gateway-clusterrole.yaml and
 * gateway-console-identity-clusterrole.yaml, and ServiceAccounts alice (edits workflows in
 * team-a) and viv (reads them there). Each suite that calls useIdentityCluster gets its own.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll } from 'vitest';
import { kubeConsoleRoutes } from '#gateway/console-kube/routes';
import { KubeSessions } from '#gateway/console-kube/sessions';
import { MemoryConsoleSessionStore } from '#gateway/console-web/store';
import { sendError } from '#gateway/http/errors';
import { KubeClient, loadKubeConfig } from '#operator/kube/index';
import { type Cluster, startCluster } from '../harness/cluster.ts';
import { root } from './helpers.ts';

const SYSTEM = 'switchyard-system';
export const A = 'team-a';
export const B = 'team-b';
let cluster: Cluster;
let dir: string;
let app: FastifyInstance;
let url: string;
export const logLines: string[] = [];

/** The session store, every value written to it kept: the test reads what a session holds. */
class RecordingStore extends MemoryConsoleSessionStore {
  readonly written: string[] = [];
  override async put(key: string, value: string, ttlMs: number): Promise<void> {
    this.written.push(value);
    return super.put(key, value, ttlMs);
  }
}
export const stored = new RecordingStore(Date.now);

export async function kubectl(args: string[], input?: string): Promise<string> {
  const r = await cluster.kubectl(args, input === undefined ? {} : { input });
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}
export const tokenOf = async (sa: string, ns: string) =>
  (await kubectl(['create', 'token', sa, '-n', ns, '--duration=1h'])).trim();

export const workflow = (ns: string, name: string, project: string, model: string) =>
  JSON.stringify({
    apiVersion: 'switchyard.dev/v1alpha1',
    kind: 'Workflow',
    metadata: { name, namespace: ns },
    spec: { projectRef: { name: project }, name, provider: 'openai', model },
  });

/** A browser's session: the cookie and CSRF token from signing in with a bearer token. */
export async function signIn(token: string) {
  const res = await fetch(`${url}/console/api/cluster/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token }),
  });
  const body = (await res.json()) as { csrf_token: string; username: string };
  const cookie = res.headers.get('set-cookie')?.split(';')[0] ?? '';
  const call = (path: string, init: { method?: string; body?: unknown; csrf?: boolean } = {}) =>
    fetch(`${url}/console/api/cluster${path}`, {
      method: init.method ?? 'GET',
      headers: {
        cookie,
        ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(init.csrf === false ? {} : { 'x-csrf-token': body.csrf_token }),
      },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });
  return { status: res.status, body, cookie, call };
}

/** Starts the control plane and the console's identity routes around the calling test file. */
export function useIdentityCluster(): void {
  beforeAll(async () => {
    cluster = await startCluster({ controllerManager: false });
    dir = await mkdtemp(join(tmpdir(), 'sy-console-ids-'));
    await kubectl(['apply', '--server-side', '-f', `${root}/crds/`]);
    await kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']);
    for (const ns of [SYSTEM, A, B]) await kubectl(['create', 'namespace', ns]);
    // An Established CRD may still answer 429 while its storage initializes.
    for (let i = 0; (await cluster.kubectl(['get', 'workflows', '-n', A])).code !== 0; i++)
      if (i > 100) throw new Error('workflows never became listable');
    for (const f of ['serviceaccount', 'clusterrole', 'bindings', 'console-identity-clusterrole'])
      await kubectl(['apply', '-n', SYSTEM, '-f', `${root}/operator/rbac/gateway-${f}.yaml`]);
    // alice edits workflows in team-a; viv only views them there; nobody here may touch team-b.
    for (const sa of ['alice', 'viv']) await kubectl(['create', 'serviceaccount', sa, '-n', A]);
    await kubectl([
      'create',
      'role',
      'wf-edit',
      '-n',
      A,
      '--verb=get,list,patch,create',
      '--resource=workflows.switchyard.dev',
    ]);
    await kubectl([
      'create',
      'role',
      'wf-view',
      '-n',
      A,
      '--verb=get,list',
      '--resource=workflows.switchyard.dev',
    ]);
    await kubectl([
      'create',
      'rolebinding',
      'alice',
      '-n',
      A,
      '--role=wf-edit',
      `--serviceaccount=${A}:alice`,
    ]);
    await kubectl(['create', 'rolebinding', 'viv', '-n', A, '--role=wf-view', `--serviceaccount=${A}:viv`]);

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
    // The gateway's log, kept: a write's line names the identity (the API server's audit log cannot).
    const logger = pino({ level: 'info' }, { write: (line: string) => void logLines.push(line) });
    app = Fastify({ loggerInstance: logger }) as unknown as FastifyInstance;
    app.setErrorHandler((err, req, reply) => sendError(err, req, reply));
    const client = new KubeClient(loadKubeConfig(kubeconfig));
    const sessions = new KubeSessions(stored, { attempts: 1000 });
    await app.register(
      async (scoped) =>
        kubeConsoleRoutes(scoped, { client, sessions, projects: () => [`${A}.alpha`, `${B}.beta`] }),
      { prefix: '/console' },
    );
    url = await app.listen({ host: '127.0.0.1', port: 0 });
  }, 600_000);

  afterAll(async () => {
    await app?.close();
    await cluster?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });
}
