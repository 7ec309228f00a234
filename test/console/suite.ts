import { expect, it } from 'vitest';
import { API_KEY, baseConfig, NO_AI_SCOPE_KEY, PROJECT_ID, workflow } from '../harness/manifests.ts';
import { ask, consoleApi, servedAfter } from './helpers.ts';

/** Providers are never called: console workflows here run in test mode. */
const NOWHERE = 'http://127.0.0.1:9';

/** The config both modes start from: project team.app with an ai key and a console key, project team.other, and one hand-written workflow. */
export const startingConfig = (): object[] => [
  ...baseConfig(NOWHERE, ['gpt-4o-mini', 'gpt-4o']),
  workflow('handmade', { provider: 'oai', model: 'gpt-4o-mini', testMode: true }),
];

export interface ConsoleTarget {
  /** embedded or cluster: printed with the measurement. */
  mode: string;
  url(): string;
  /** The stored form of a console workflow (the YAML file or the CR), undefined when absent. */
  stored(objectName: string): Promise<{ metadata: { labels?: Record<string, string> } } | undefined>;
}

/** The same contract on both backends: every verb, the 404/403 rules, 422 with the field, 2 s to serve. */
export function consoleContract(t: ConsoleTarget): void {
  const api = () => consoleApi(t.url(), NO_AI_SCOPE_KEY, PROJECT_ID);
  const body = {
    name: 'Support/Chat',
    description: 'created through the console API',
    provider: 'oai',
    model: 'gpt-4o-mini',
    request_type: 'chat',
    backup_1_provider: 'claude',
    backup_1_model: 'gpt-4o',
    testMode: true,
  };

  it('POST creates a workflow: 201 with the Ready verdict, labelled, served within 2 s', async () => {
    const t0 = performance.now();
    const res = await api().create(body);
    const answered = performance.now() - t0;
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({
      object: 'workflow',
      project_id: PROJECT_ID,
      name: 'Support/Chat',
      provider: 'oai',
      model: 'gpt-4o-mini',
      request_type: 'chat',
      backup_1_provider: 'claude',
      backup_1_model: 'gpt-4o',
      description: 'created through the console API',
      testMode: true,
      managed_by_console: true,
      ready: { status: 'True', reason: 'Valid' },
    });
    const objectName = (res.body.resource as { name: string }).name;
    const stored = await t.stored(objectName);
    expect(stored?.metadata.labels?.['app.kubernetes.io/managed-by']).toBe('switchyard-console');
    const ms = await servedAfter(
      t0,
      5000,
      async () => (await ask(t.url(), API_KEY, 'Support/Chat')).status === 200,
    );
    console.log(
      `[console ${t.mode}] POST answered 201 after ${answered.toFixed(0)} ms; new workflow served after ${ms.toFixed(0)} ms`,
    );
    expect(ms).toBeLessThan(2000);
  });

  it('GET lists the project’s workflows (console-made and hand-written) and reads one', async () => {
    const list = await api().list();
    expect(list.status).toBe(200);
    const data = list.body.data as { name: string; managed_by_console: boolean }[];
    expect(data.map((w) => [w.name, w.managed_by_console])).toEqual([
      ['handmade', false],
      ['Support/Chat', true],
    ]);
    const one = await api().get('Support/Chat');
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({
      name: 'Support/Chat',
      backup_1_model: 'gpt-4o',
      ready: { status: 'True' },
    });
    expect((await api().get('nope')).status).toBe(404);
  });

  it('PUT replaces the spec (the gateway serves the new model), DELETE removes it', async () => {
    const res = await api().replace('Support/Chat', { provider: 'oai', model: 'gpt-4o', testMode: true });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ model: 'gpt-4o', ready: { status: 'True' } });
    expect(res.body.backup_1_provider).toBeUndefined();
    expect(
      await servedAfter(
        performance.now(),
        5000,
        async () => (await ask(t.url(), API_KEY, 'Support/Chat')).model === 'gpt-4o',
      ),
    ).toBeLessThan(5000);
    const objectName = (res.body.resource as { name: string }).name;
    const gone = await api().delete('Support/Chat');
    expect(gone.status).toBe(204);
    expect((await api().get('Support/Chat')).status).toBe(404);
    expect(await t.stored(objectName)).toBeUndefined();
    expect(
      await servedAfter(
        performance.now(),
        5000,
        async () => (await ask(t.url(), API_KEY, 'Support/Chat')).status === 404,
      ),
    ).toBeLessThan(5000);
    expect((await api().delete('Support/Chat')).status).toBe(404);
  });

  it('another project, existing or not, is 404 with the same answer; a key without console is 403', async () => {
    const other = await consoleApi(t.url(), NO_AI_SCOPE_KEY, 'team.other').list();
    const unknown = await consoleApi(t.url(), NO_AI_SCOPE_KEY, 'nowhere.none').list();
    expect(other.status).toBe(404);
    expect(unknown.status).toBe(404);
    expect(other.body.error).toBe(unknown.body.error);
    expect((await consoleApi(t.url(), NO_AI_SCOPE_KEY, 'team.other').create(body)).status).toBe(404);
    const aiOnly = consoleApi(t.url(), API_KEY, PROJECT_ID);
    for (const r of [await aiOnly.list(), await aiOnly.create(body), await aiOnly.delete('handmade')]) {
      expect(r.status).toBe(403);
      expect(r.body.error).toBe('insufficient_permission');
    }
  });

  it('a refused spec is 422 naming the field, and nothing is left behind', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ ...body, name: 'bad-type', request_type: 'video' }, 'request_type'],
      [{ ...body, name: 'bad-provider', provider: 'nosuch' }, 'provider'],
      [{ ...body, name: 'bad-backup', backup_1_provider: 'nosuch' }, 'backup_1_provider'],
      [{ ...body, name: 'bad-model', model: 'gpt-5-nope' }, 'model'],
    ];
    for (const [b, field] of cases) {
      const res = await api().create(b);
      expect(res.status, JSON.stringify(res.body)).toBe(422);
      expect(res.body).toMatchObject({ error: 'invalid_workflow', param: field });
      expect((await api().get(String(b.name))).status).toBe(404);
    }
    const backups = await api().create({
      name: 'bad-array',
      provider: 'oai',
      model: 'gpt-4o-mini',
      backups: [{ provider: 'oai', model: 'nope' }],
    });
    expect(backups.body).toMatchObject({ error: 'invalid_workflow', param: 'backups[0].model' });
  });

  it('a refused replace leaves the serving workflow as it was', async () => {
    const keeper = { name: 'keeper', provider: 'oai', model: 'gpt-4o-mini', testMode: true };
    expect((await api().create(keeper)).status).toBe(201);
    const bad = await api().replace('keeper', { ...keeper, provider: 'nosuch' });
    expect(bad).toMatchObject({ status: 422, body: { error: 'invalid_workflow', param: 'provider' } });
    const bad2 = await api().replace('keeper', { ...keeper, request_type: 'video' });
    expect(bad2).toMatchObject({ status: 422, body: { param: 'request_type' } });
    expect((await api().get('keeper')).body).toMatchObject({ provider: 'oai', ready: { status: 'True' } });
    expect((await ask(t.url(), API_KEY, 'keeper')).status).toBe(200);
    expect((await api().delete('keeper')).status).toBe(204);
  });

  it('refuses a taken name (409), hand-written workflows (409), unknown fields and gaps (400)', async () => {
    expect((await api().create({ ...body, name: 'handmade' })).status).toBe(409);
    const handmade = await api().replace('handmade', { provider: 'oai', model: 'gpt-4o' });
    expect(handmade.status).toBe(409);
    expect((await api().delete('handmade')).status).toBe(409);
    const unknown = await api().create({ ...body, name: 'x', projectRef: { name: 'other' } });
    expect(unknown).toMatchObject({ status: 400, body: { param: 'projectRef' } });
    const gap = await api().create({
      name: 'x',
      provider: 'oai',
      model: 'm',
      backup_2_provider: 'a',
      backup_2_model: 'b',
    });
    expect(gap).toMatchObject({ status: 400, body: { param: 'backup_1_provider' } });
  });
}
