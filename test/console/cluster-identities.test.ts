/**
 * Kubernetes identities in the console, on a real API server: tokens checked by TokenReview, every
 * view and write by SubjectAccessReview, writes as server-side applies under the field manager
 * switchyard-console. The gateway side runs with nothing but a ServiceAccount token bound to
 * operator/rbac/gateway-clusterrole.yaml and gateway-console-identity-clusterrole.yaml.
 */
import { describe, expect, it } from 'vitest';
import {
  A,
  B,
  kubectl,
  logLines,
  signIn,
  stored,
  tokenOf,
  useIdentityCluster,
  workflow,
} from './cluster-identity-fixture.ts';

useIdentityCluster();

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
