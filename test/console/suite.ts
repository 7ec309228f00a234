import { expect, it } from 'vitest';
import { objectNameFor } from '#gateway/console/names';
import {
  API_KEY,
  apiKey,
  baseConfig,
  NO_AI_SCOPE_KEY,
  NS,
  PROJECT_ID,
  project,
  workflow,
} from '../harness/manifests.ts';
import { ask, consoleApi, servedAfter } from './helpers.ts';

/** Project team.app-eu: its name and team.app's join alike (`app-eu` + `x`, `app` + `eu-x`). */
const EU_PROJECT = 'app-eu';
const EU_KEY = 'sy_live_ConsoleKeyOfProjectAppEu0123456789';

/** Providers are never called: console workflows here run in test mode. */
const NOWHERE = 'http://127.0.0.1:9';

/** The config both modes start from: project team.app with an ai key and a console key, project team.other, and one hand-written workflow. */
export const startingConfig = (): object[] => [
  ...baseConfig(NOWHERE, ['gpt-4o-mini', 'gpt-4o']),
  workflow('handmade', { provider: 'oai', model: 'gpt-4o-mini', testMode: true }),
  project(EU_PROJECT),
  ...apiKey('app-eu-admin', EU_KEY, { project: EU_PROJECT, scopes: ['ai', 'console'] }),
];

export interface ConsoleTarget {
  /** embedded or cluster: printed with the measurement. */
  mode: string;
  url(): string;
  /** The stored form of a console workflow (the YAML file or the CR), undefined when absent. */
  stored(objectName: string): Promise<StoredWorkflow | undefined>;
  /** Stores a Workflow object as a console write would, without the console (another project's). */
  plant(manifest: PlantedWorkflow): Promise<void>;
}

export interface StoredWorkflow {
  metadata: { labels?: Record<string, string> };
  spec?: { name?: string; projectRef?: { name: string } };
}

export interface PlantedWorkflow {
  apiVersion: string;
  kind: 'Workflow';
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  spec: Record<string, unknown>;
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

  it('two projects whose names join alike keep their own workflows; a create never replaces another project’s object', async () => {
    const eu = consoleApi(t.url(), EU_KEY, `${NS}.${EU_PROJECT}`);
    const spec = { provider: 'oai', model: 'gpt-4o-mini', testMode: true };
    const a = await eu.create({ name: 'x', ...spec });
    const b = await api().create({ name: 'eu-x', ...spec });
    expect(a.status, JSON.stringify(a.body)).toBe(201);
    expect(b.status, JSON.stringify(b.body)).toBe(201);
    const nameA = (a.body.resource as { name: string }).name;
    const nameB = (b.body.resource as { name: string }).name;
    expect(nameA).not.toBe(nameB);
    expect((await t.stored(nameA))?.spec?.projectRef?.name).toBe(EU_PROJECT);
    expect((await t.stored(nameB))?.spec?.projectRef?.name).toBe('app');
    expect((await eu.get('x')).status).toBe(200);
    expect((await api().get('eu-x')).status).toBe(200);
    const served = async (key: string, wf: string) =>
      servedAfter(performance.now(), 5000, async () => (await ask(t.url(), key, wf)).status === 200);
    expect(await served(EU_KEY, 'x')).toBeLessThan(5000);
    expect(await served(API_KEY, 'eu-x')).toBeLessThan(5000);

    // The object name team.app's `squat` would get, already held by a workflow of team.app-eu.
    const squatted = objectNameFor('app', 'squat');
    await t.plant({
      apiVersion: 'switchyard.dev/v1alpha1',
      kind: 'Workflow',
      metadata: {
        name: squatted,
        namespace: NS,
        labels: { 'app.kubernetes.io/managed-by': 'switchyard-console' },
      },
      spec: { projectRef: { name: EU_PROJECT }, name: 'planted', ...spec },
    });
    expect(
      await servedAfter(performance.now(), 5000, async () => (await eu.get('planted')).status === 200),
    ).toBeLessThan(5000);
    const refused = await api().create({ name: 'squat', ...spec });
    console.log(
      `[console ${t.mode}] create onto another project's object name: ${refused.status} ${String(refused.body.message)}`,
    );
    expect(refused.status).toBe(409);
    expect(refused.body.error).toBe('conflict');
    expect((await t.stored(squatted))?.spec).toMatchObject({
      name: 'planted',
      projectRef: { name: EU_PROJECT },
    });
    expect((await eu.get('planted')).status).toBe(200);
    expect((await api().get('squat')).status).toBe(404);

    for (const r of [await eu.delete('x'), await eu.delete('planted'), await api().delete('eu-x')])
      expect(r.status).toBe(204);
  });

  it('names up to the schema’s 128 characters, / and : included, are read, replaced and deleted', async () => {
    const long = `L${'ong/name:'.repeat(20)}`.slice(0, 128);
    const spec = { provider: 'oai', model: 'gpt-4o-mini', testMode: true };
    const created = await api().create({ name: long, ...spec });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const read = await api().get(long);
    expect(read.status).toBe(200);
    expect(read.body.name).toBe(long);
    expect((await api().replace(long, { ...spec, model: 'gpt-4o' })).status).toBe(200);
    expect((await api().delete(long)).status).toBe(204);
    expect((await api().get(long)).status).toBe(404);
    const over = await api().create({ name: `${long}x`, ...spec });
    expect(over).toMatchObject({ status: 422, body: { error: 'invalid_workflow', param: 'name' } });
    // Past any name a workflow can have: the API's error shape, not the framework's.
    const huge = await api().get('n'.repeat(2000));
    expect(huge).toMatchObject({ status: 414, body: { error: 'uri_too_long' } });
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
