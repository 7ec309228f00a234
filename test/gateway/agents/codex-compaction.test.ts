/**
 * Codex CLI with only the README's provider entry, in a session that crosses its context limit:
 * the provider reports a prompt far past the model's window on the first answer (which calls a
 * tool), so Codex compacts the session before it goes on. With the gateway as a custom provider
 * Codex compacts inline (a summary asked for over POST /v1/responses, which the gateway serves like
 * any request), not through POST /v1/responses/compact; the session then completes.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../harness/gateway.ts';
import { API_KEY, baseConfig, workflow } from '../../harness/manifests.ts';
import { type Simulator, startSimulator } from '../../simulator/index.ts';
import { codexBin, ensureClis, runCli } from './clis.ts';

let sim: Simulator;
let gw: RunningGateway;
let home: string;

beforeAll(async () => {
  await ensureClis();
  sim = await startSimulator();
  gw = await startGateway([
    ...baseConfig(sim.url),
    workflow('coder', { provider: 'oai', model: 'gpt-4o-mini', hostedTools: { default: 'omit' } }),
  ]);
  home = await mkdtemp(join(tmpdir(), 'switchyard-codex-compact-'));
}, 600_000);
afterAll(async () => {
  await gw?.close();
  await sim?.close();
  if (home) await rm(home, { recursive: true, force: true });
});

it('a codex exec session past its context limit compacts and completes', async () => {
  const codexHome = join(home, 'codex');
  const work = join(home, 'work');
  await mkdir(codexHome, { recursive: true });
  await mkdir(work, { recursive: true });
  await writeFile(
    join(codexHome, 'config.toml'),
    [
      'model = "coder"',
      'model_provider = "switchyard"',
      '',
      '[model_providers.switchyard]',
      'name = "Switchyard"',
      `base_url = "${gw.url}/v1"`,
      'env_key = "SWITCHYARD_API_KEY"',
      'wire_api = "responses"',
    ].join('\n'),
  );
  await writeFile(join(work, 'marker.txt'), 'switchyard-compaction-marker\n');
  sim.clearRequests();
  sim.addFault({
    match: { provider: 'openai' },
    times: 1,
    promptTokens: 5_000_000,
    toolCall: { name: 'exec_command', args: { cmd: 'cat marker.txt' } },
  });
  const r = await runCli(
    codexBin,
    ['exec', '--skip-git-repo-check', '--sandbox', 'read-only', 'Show me marker.txt'],
    { HOME: home, CODEX_HOME: codexHome, SWITCHYARD_API_KEY: API_KEY },
    work,
  );
  const calls = sim.requests().filter((q) => q.provider === 'openai');
  const bodies = calls.map((c) => JSON.stringify(c.body));
  // Codex's own summary request: no tools, its compaction prompt as the last input.
  const summaryCall = bodies.findIndex((b) => b.includes('seamlessly continue the work'));
  console.log(
    `codex exec past its context limit: exit ${r.code}, ${calls.length} provider calls, ` +
      `the summary request is call #${summaryCall}, ${r.stderr.includes('context compacted') ? '' : 'no '}"context compacted"`,
  );
  expect(r.code, r.stderr + r.stdout).toBe(0);
  expect(r.stderr + r.stdout).toContain('context compacted');
  expect(summaryCall).toBeGreaterThan(0);
  // The turns after it carry the summary (the simulator's answer to the summary request) instead of
  // the turns it replaced; the tool's output was in the history that was summarized.
  expect(bodies[summaryCall]).toContain('switchyard-compaction-marker');
  const after = bodies.slice(summaryCall + 1);
  expect(after.length).toBeGreaterThan(0);
  expect(after.every((b) => b.includes('Simulated openai/gpt-4o-mini reply'))).toBe(true);
  expect(r.stdout).toContain('Simulated openai/gpt-4o-mini');
}, 300_000);
