/**
 * Kubernetes identities in the console, on a real API server: tokens checked by TokenReview, every
 * view and write by SubjectAccessReview, writes as server-side applies under the field manager
 * switchyard-console. The gateway side runs with nothing but a ServiceAccount token bound to
 * operator/rbac/gateway-clusterrole.yaml and gateway-console-identity-clusterrole.yaml.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubeConsoleRoutes } from '#gateway/console-kube/routes';
import { KubeSessions } from '#gateway/console-kube/sessions';
import { MemoryConsoleSessionStore } from '#gateway/console-web/store';
import { sendError } from '#gateway/http/errors';
import { KubeClient, loadKubeConfig } from '#operator/kube/index';
import { type Cluster, startCluster } from '../harness/cluster.ts';
import { root } from './helpers.ts';

const SYSTEM = 'switchyard-system';
const A = 'team-a';
const B = 'team-b';
let cluster: Cluster;
let dir: string;
let app: FastifyInstance;
let url: string;
const logLines: string[] = [];

/** The session store, every value written to it kept: the test reads what a session holds. */
class RecordingStore extends MemoryConsoleSessionStore {
  readonly written: string[] = [];
  override async put(key: string, value: string, ttlMs: number): Promise<void> {
    this.written.push(value);
    return super.put(key, value, ttlMs);
  }
}
const stored = new RecordingStore(Date.now);

async function kubectl(args: string[], input?: string): Promise<string> {
  const r = await cluster.kubectl(args, input === undefined ? {} : { input });
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}
const tokenOf = async (sa: string, ns: string) =>
  (await kubectl(['create', 'token', sa, '-n', ns, '--duration=1h'])).trim();

const workflow = (ns: string, name: string, project: string, model: string) =>
  JSON.stringify({
    apiVersion: 'switchyard.dev/v1alpha1',
    kind: 'Workflow',
    metadata: { name, namespace: ns },
    spec: { projectRef: { name: project }, name, provider: 'openai', model },
  });

/** A browser's session: the cookie and CSRF token from signing in with a bearer token. */
async function signIn(token: string) {
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
  await kubectl(['create', 'rolebinding', 'alice', '-n', A, '--role=wf-edit', `--serviceaccount=${A}:alice`]);
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

describe('console sign-in with a Kubernetes identity', () => {
  it('a token the API server does not accept is 401; the session never holds the token', async () => {
    const bad = await signIn('not-a-token');
    expect(bad.status).toBe(401);
    const token = await tokenOf('alice', A);
    const alice = await signIn(token);
    expect(alice.status).toBe(200);
    expect(alice.body.username).toBe(`system:serviceaccount:${A}:alice`);
    expect(alice.cookie).toMatch(/^sy_console_k8s=[A-Za-z0-9_-]{40,}$/);
    // What the session holds is the identity and the CSRF token; the bearer token is nowhere.
    const held = stored.written.at(-1) ?? '';
    expect(JSON.parse(held)).toMatchObject({ identity: { username: alice.body.username } });
    expect(stored.written.some((v) => v.includes(token.slice(-40)))).toBe(false);
  });

  it('an identity whose RBAC allows one namespace sees only that project', async () => {
    const alice = await signIn(await tokenOf('alice', A));
    const list = (await (await alice.call('/projects')).json()) as {
      data: { id: string; can_edit: boolean }[];
    };
    expect(list.data).toEqual([expect.objectContaining({ id: `${A}.alpha`, can_edit: true })]);
    expect((await alice.call(`/projects/${B}.beta/workflows`)).status).toBe(404);
    const viv = await signIn(await tokenOf('viv', A));
    const vivList = (await (await viv.call('/projects')).json()) as {
      data: { id: string; can_edit: boolean }[];
    };
    expect(vivList.data).toEqual([expect.objectContaining({ id: `${A}.alpha`, can_edit: false })]);
  });

  it('a write by an allowed identity lands as a server-side apply by switchyard-console', async () => {
    const alice = await signIn(await tokenOf('alice', A));
    const put = await alice.call(`/projects/${A}.alpha/workflows/summarize`, {
      method: 'PUT',
      body: {
        provider: 'openai',
        model: 'gpt-4o-mini',
        systemInstructions: 'Be brief.',
        cacheFields: ['metadata.customer_id'],
      },
    });
    if (put.status !== 201) throw new Error(await put.text());
    const created = (await put.json()) as { resource: { name: string }; field_manager: string };
    expect(created.field_manager).toBe('switchyard-console');
    const stored = JSON.parse(
      await kubectl([
        'get',
        'workflow',
        '-n',
        A,
        created.resource.name,
        '-o',
        'json',
        '--show-managed-fields',
      ]),
    ) as {
      spec: Record<string, unknown>;
      metadata: { managedFields: { manager: string; operation: string }[] };
    };
    expect(stored.spec).toMatchObject({
      model: 'gpt-4o-mini',
      systemInstructions: 'Be brief.',
      cacheFields: ['metadata.customer_id'],
    });
    expect(stored.metadata.managedFields.map((m) => [m.manager, m.operation])).toEqual([
      ['switchyard-console', 'Apply'],
    ]);
    const written = logLines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.msg === 'console: applied');
    expect(written).toMatchObject({
      user: `system:serviceaccount:${A}:alice`,
      kind: 'Workflow',
      namespace: A,
    });
    // An edit of its own object is applied again, nothing forced.
    const edit = await alice.call(`/projects/${A}.alpha/workflows/summarize`, {
      method: 'PUT',
      body: { provider: 'openai', model: 'gpt-4.1-mini' },
    });
    expect(edit.status).toBe(200);
    const after = JSON.parse(
      await kubectl(['get', 'workflow', '-n', A, created.resource.name, '-o', 'json']),
    ) as {
      spec: Record<string, unknown>;
    };
    expect(after.spec.model).toBe('gpt-4.1-mini');
    expect(after.spec.systemInstructions).toBeUndefined();
  });

  it('an edit of a workflow another field manager owns yields YAML and a command, not a write', async () => {
    await kubectl(
      ['apply', '--server-side', '--field-manager=argocd-controller', '-f', '-'],
      workflow(A, 'gitops-chat', 'alpha', 'gpt-4o'),
    );
    const alice = await signIn(await tokenOf('alice', A));
    const shown = (await (await alice.call(`/projects/${A}.alpha/workflows/gitops-chat`)).json()) as {
      owners: { manager: string; tool: string }[];
    };
    expect(shown.owners).toEqual([
      expect.objectContaining({ manager: 'argocd-controller', tool: 'Argo CD' }),
    ]);
    const res = await alice.call(`/projects/${A}.alpha/workflows/gitops-chat`, {
      method: 'PUT',
      body: { provider: 'openai', model: 'gpt-4o-mini' },
    });
    expect(res.status).toBe(409);
    const handOff = (await res.json()) as {
      applied: boolean;
      message: string;
      yaml: string;
      command: string;
    };
    expect(handOff.applied).toBe(false);
    expect(handOff.message).toMatch(/conflict.*argocd-controller.*\.spec\.model/is);
    expect(handOff.yaml).toContain('model: gpt-4o-mini');
    expect(handOff.command).toBe(
      'kubectl apply --server-side --field-manager=argocd-controller -f workflow-gitops-chat.yaml',
    );
    const stored = JSON.parse(await kubectl(['get', 'workflow', '-n', A, 'gitops-chat', '-o', 'json'])) as {
      spec: Record<string, unknown>;
    };
    expect(stored.spec.model).toBe('gpt-4o');
  });

  it('a viewer may not write (403), and a write without the CSRF token is refused', async () => {
    const viv = await signIn(await tokenOf('viv', A));
    const body = { provider: 'openai', model: 'gpt-4o-mini' };
    const denied = await viv.call(`/projects/${A}.alpha/workflows/viv-try`, { method: 'PUT', body });
    expect(denied.status).toBe(403);
    expect(await denied.text()).toMatch(/may not patch workflows/);
    const alice = await signIn(await tokenOf('alice', A));
    const noCsrf = await alice.call(`/projects/${A}.alpha/workflows/x`, { method: 'PUT', body, csrf: false });
    expect(noCsrf.status).toBe(403);
    expect((await kubectl(['get', 'workflows', '-n', A, '-o', 'name'])).trim().split('\n')).toHaveLength(2);
  });

  it("a Project's webhook endpoints: applied when nobody else owns them, handed off when GitOps does", async () => {
    const project = (webhooks?: unknown[]) =>
      JSON.stringify({
        apiVersion: 'switchyard.dev/v1alpha1',
        kind: 'Project',
        metadata: { name: 'alpha', namespace: A },
        spec: { displayName: 'Alpha', ...(webhooks ? { webhooks } : {}) },
      });
    await kubectl(['apply', '--server-side', '--field-manager=argocd-controller', '-f', '-'], project());
    const alice = await signIn(await tokenOf('alice', A));
    const hook = (url: string) => ({ url, secretRef: { name: 'hook-secret' }, events: ['ai.response'] });
    const put = (url: string) =>
      alice.call(`/projects/${A}.alpha/webhooks`, { method: 'PUT', body: { webhooks: [hook(url)] } });

    // alice's Role has no rights on projects: 404, as for a project she cannot see.
    expect((await put('https://hooks.example.com/a')).status).toBe(404);
    await kubectl([
      'create',
      'role',
      'project-edit',
      '-n',
      A,
      '--verb=get,patch',
      '--resource=projects.switchyard.dev',
    ]);
    await kubectl([
      'create',
      'rolebinding',
      'alice-project',
      '-n',
      A,
      '--role=project-edit',
      `--serviceaccount=${A}:alice`,
    ]);

    const applied = await put('https://hooks.example.com/a');
    expect(applied.status).toBe(200);
    const stored = JSON.parse(
      await kubectl(['get', 'project', '-n', A, 'alpha', '-o', 'json', '--show-managed-fields']),
    ) as {
      spec: { displayName: string; webhooks: { url: string }[] };
      metadata: { managedFields: { manager: string; fieldsV1: { 'f:spec'?: Record<string, unknown> } }[] };
    };
    expect(stored.spec.displayName).toBe('Alpha');
    expect(stored.spec.webhooks.map((w) => w.url)).toEqual(['https://hooks.example.com/a']);
    const console_ = stored.metadata.managedFields.find((m) => m.manager === 'switchyard-console');
    expect(Object.keys(console_?.fieldsV1['f:spec'] ?? {})).toEqual(['f:webhooks']);

    // GitOps takes the list over; the console's next edit is a hand-off, not a write.
    await kubectl(
      ['apply', '--server-side', '--force-conflicts', '--field-manager=argocd-controller', '-f', '-'],
      project([hook('https://hooks.example.com/gitops')]),
    );
    const refused = await put('https://hooks.example.com/b');
    expect(refused.status).toBe(409);
    const handOff = (await refused.json()) as { message: string; command: string; yaml: string };
    expect(handOff.message).toMatch(/conflict with "argocd-controller".*\.spec\.webhooks/s);
    expect(handOff.command).toBe(
      'kubectl apply --server-side --field-manager=argocd-controller -f project-alpha.yaml',
    );
    expect(handOff.yaml).toContain('https://hooks.example.com/b');
    const after = JSON.parse(await kubectl(['get', 'project', '-n', A, 'alpha', '-o', 'json'])) as {
      spec: { webhooks: { url: string }[] };
    };
    expect(after.spec.webhooks.map((w) => w.url)).toEqual(['https://hooks.example.com/gitops']);
  });

  it('API keys: created, revoked and rotated as applies by switchyard-console; a GitOps key is handed off', async () => {
    const alice = await signIn(await tokenOf('alice', A));
    const keys = `/projects/${A}.alpha/apikeys`;
    expect((await alice.call(keys)).status).toBe(404);
    await kubectl([
      'create',
      'role',
      'key-edit',
      '-n',
      A,
      '--verb=get,list,patch,create',
      '--resource=apikeys.switchyard.dev',
    ]);
    await kubectl([
      'create',
      'rolebinding',
      'alice-keys',
      '-n',
      A,
      '--role=key-edit',
      `--serviceaccount=${A}:alice`,
    ]);

    const created = await alice.call(keys, {
      method: 'POST',
      body: { name: 'ci-key', scopes: ['ai', 'console'] },
    });
    const createdText = await created.text();
    expect(created.status, createdText).toBe(201);
    expect(createdText).not.toMatch(/sy_live_/);
    const revoked = await alice.call(`${keys}/ci-key/revoke`, { method: 'POST' });
    expect(revoked.status, await revoked.text()).toBe(200);
    expect((await alice.call(`${keys}/ci-key/rotate`, { method: 'POST' })).status).toBe(200);
    const stored = JSON.parse(
      await kubectl(['get', 'apikey', '-n', A, 'ci-key', '-o', 'json', '--show-managed-fields']),
    ) as {
      spec: { scopes: string[]; revoked: boolean; rotation: { generation: number } };
      metadata: { managedFields: { manager: string; operation: string }[] };
    };
    expect(stored.spec).toMatchObject({
      scopes: ['ai', 'console'],
      revoked: true,
      rotation: { generation: 1 },
    });
    expect(stored.metadata.managedFields.map((m) => [m.manager, m.operation])).toEqual([
      ['switchyard-console', 'Apply'],
    ]);
    const listed = (await (await alice.call(keys)).json()) as { data: { name: string; revoked: boolean }[] };
    expect(listed.data).toEqual([expect.objectContaining({ name: 'ci-key', revoked: true })]);

    await kubectl(
      ['apply', '--server-side', '--field-manager=argocd-controller', '-f', '-'],
      JSON.stringify({
        apiVersion: 'switchyard.dev/v1alpha1',
        kind: 'ApiKey',
        metadata: { name: 'gitops-key', namespace: A },
        spec: { projectRef: { name: 'alpha' }, revoked: false },
      }),
    );
    const refused = await alice.call(`${keys}/gitops-key/revoke`, { method: 'POST' });
    expect(refused.status).toBe(409);
    const handOff = (await refused.json()) as { message: string; yaml: string };
    expect(handOff.message).toMatch(/argocd-controller.*\.spec\.revoked/s);
    expect(handOff.yaml).toContain('revoked: true');
    const after = JSON.parse(await kubectl(['get', 'apikey', '-n', A, 'gitops-key', '-o', 'json'])) as {
      spec: { revoked: boolean };
    };
    expect(after.spec.revoked).toBe(false);
  });

  it('the schema refuses a bad value: 422 naming the field, nothing written', async () => {
    const alice = await signIn(await tokenOf('alice', A));
    const res = await alice.call(`/projects/${A}.alpha/workflows/bad`, {
      method: 'PUT',
      body: { provider: 'openai', model: 'gpt-4o-mini', request_type: 'telepathy' },
    });
    expect(res.status).toBe(422);
    expect(await res.text()).toMatch(/request_type/);
  });
});
