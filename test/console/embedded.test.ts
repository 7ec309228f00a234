/** The console API in embedded mode: a real `embedded/main.ts` process writing YAML into its config folder. */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { NO_AI_SCOPE_KEY, PROJECT_ID } from '../harness/manifests.ts';
import { consoleApi, type Proc, servedAfter, startProcess } from './helpers.ts';
import { consoleContract, type StoredWorkflow, startingConfig } from './suite.ts';

let dir: string;
let gw: Proc;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'sy-console-'));
  await writeFile(
    join(dir, 'config.yaml'),
    startingConfig()
      .map((m) => stringify(m))
      .join('---\n'),
  );
  gw = await startProcess('embedded/main.ts', ['--config', dir], {}, (port, metricsPort) => ({
    args: ['--port', String(port), '--metrics-port', String(metricsPort)],
    env: { SWITCHYARD_HOST: '127.0.0.1' },
  }));
}, 60_000);

afterAll(async () => {
  await gw?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('embedded mode (config folder)', () => {
  consoleContract({
    mode: 'embedded',
    url: () => gw.url,
    async stored(objectName) {
      const text = await readFile(join(dir, `console-team.${objectName}.yaml`), 'utf8').catch(
        () => undefined,
      );
      return text === undefined ? undefined : (parse(text) as StoredWorkflow);
    },
    async plant(manifest) {
      await writeFile(join(dir, `console-team.${manifest.metadata.name}.yaml`), stringify(manifest));
    },
  });

  it('the folder is the truth: removing a console file by hand removes the workflow', async () => {
    const api = consoleApi(gw.url, NO_AI_SCOPE_KEY, PROJECT_ID);
    const res = await api.create({ name: 'by-hand', provider: 'oai', model: 'gpt-4o-mini', testMode: true });
    expect(res.status).toBe(201);
    const name = (res.body.resource as { name: string }).name;
    await rm(join(dir, `console-team.${name}.yaml`));
    expect(
      await servedAfter(performance.now(), 5000, async () => (await api.get('by-hand')).status === 404),
    ).toBeLessThan(5000);
  });
});
