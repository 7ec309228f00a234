/**
 * Webhook endpoints and API keys edited by a Kubernetes identity on a real API server: non-forced
 * server-side applies by switchyard-console, handed off as YAML and a command when GitOps owns them.
 */
import { describe, expect, it } from 'vitest';
import { A, kubectl, signIn, tokenOf, useIdentityCluster } from './cluster-identity-fixture.ts';

useIdentityCluster();

describe('console writes of a Kubernetes identity beside GitOps', () => {
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
});
