/**
 * Codex CLI (`codex exec`, a model_providers entry with wire_api "responses") and Claude Code
 * (`claude -p` with ANTHROPIC_BASE_URL, ANTHROPIC_AUTH_TOKEN and ANTHROPIC_MODEL) against a real
 * gateway in front of the provider simulator. Each runs as a user runs it: a fresh home, the
 * README's settings and nothing else (telemetry, error reporting and update checks at their
 * defaults: with no network here they fail quietly, as behind a firewall).
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../harness/gateway.ts';
import { API_KEY, baseConfig, workflow } from '../../harness/manifests.ts';
import { type Simulator, startSimulator } from '../../simulator/index.ts';
import { claudeBin, codexBin, ensureClis, runCli } from './clis.ts';

let sim: Simulator;
let gw: RunningGateway;
let home: string;

beforeAll(async () => {
  await ensureClis();
  sim = await startSimulator();
  gw = await startGateway([
    ...baseConfig(sim.url),
    // As examples/ has it: Codex's hosted tools (web_search, ...) are omitted, not refused.
    workflow('coder', { provider: 'oai', model: 'gpt-4o-mini', hostedTools: { default: 'omit' } }),
    workflow('coder-on-claude', {
      provider: 'claude',
      model: 'claude-haiku-4-5',
      hostedTools: { default: 'omit' },
    }),
    workflow('claude-coder', { provider: 'claude', model: 'claude-haiku-4-5' }),
    workflow('claude-on-openai', { provider: 'oai', model: 'gpt-4o-mini' }),
  ]);
  home = await mkdtemp(join(tmpdir(), 'switchyard-clis-'));
}, 600_000);
afterAll(async () => {
  await gw?.close();
  await sim?.close();
  if (home) await rm(home, { recursive: true, force: true });
});

/** The tool names and the first tool result of a provider request, in either provider's shape. */
function upstream(body: unknown): { stream?: boolean; names: string[]; toolResult: string } {
  const b = body as {
    stream?: boolean;
    tools?: { name?: string; function?: { name: string } }[];
    messages: { role: string; content?: unknown }[];
  };
  const names = (b.tools ?? []).map((t) => t.function?.name ?? t.name ?? '');
  const openai = b.messages.find((m) => m.role === 'tool')?.content;
  const anthropic = b.messages
    .flatMap((m) => (Array.isArray(m.content) ? (m.content as { type: string; content?: unknown }[]) : []))
    .find((c) => c.type === 'tool_result')?.content;
  return {
    ...(b.stream !== undefined ? { stream: b.stream } : {}),
    names,
    toolResult: JSON.stringify(openai ?? anthropic ?? null),
  };
}

describe('Codex CLI over the Responses surface, with only the provider entry', () => {
  const targets = [
    { workflow: 'coder', sim: 'openai', answer: 'Simulated openai/gpt-4o-mini' },
    { workflow: 'coder-on-claude', sim: 'anthropic', answer: 'Simulated anthropic/claude-haiku-4-5' },
  ] as const;
  it.each(targets)(
    'codex exec on $workflow ($sim) calls a tool and answers with its result',
    async (t) => {
      const codexHome = join(home, `codex-${t.workflow}`);
      const work = join(home, `codex-work-${t.workflow}`);
      await mkdir(codexHome, { recursive: true });
      await mkdir(work, { recursive: true });
      // The README's provider entry and nothing else: Codex's defaults (its namespaces, hosted
      // web_search, analytics, the update check) as a user has them.
      await writeFile(
        join(codexHome, 'config.toml'),
        [
          `model = "${t.workflow}"`,
          'model_provider = "switchyard"',
          '',
          '[model_providers.switchyard]',
          'name = "Switchyard"',
          `base_url = "${gw.url}/v1"`,
          'env_key = "SWITCHYARD_API_KEY"',
          'wire_api = "responses"',
        ].join('\n'),
      );
      // The model's first answer calls Codex's shell tool on a file only the tool can read; its output
      // must come back to the model in the next request.
      await writeFile(join(work, 'marker.txt'), 'switchyard-tool-marker-7f3a\n');
      sim.clearRequests();
      sim.addFault({
        match: { provider: t.sim },
        times: 1,
        toolCall: { name: 'exec_command', args: { cmd: 'cat marker.txt' } },
      });
      const r = await runCli(
        codexBin,
        ['exec', '--skip-git-repo-check', '--sandbox', 'read-only', 'Show me marker.txt'],
        { HOME: home, CODEX_HOME: codexHome, SWITCHYARD_API_KEY: API_KEY },
        work,
      );
      expect(r.code, r.stderr + r.stdout).toBe(0);
      expect(r.stdout).toContain(t.answer);
      const calls = sim.requests().filter((q) => q.provider === t.sim);
      const first = upstream(calls[0]!.body);
      console.log(
        `codex exec on ${t.sim}: ${calls.length} provider calls, first upstream body ` +
          `${JSON.stringify(calls[0]!.body).length} bytes, ${first.names.length} tools: ${first.names.join(' ')}`,
      );
      expect(first.stream).toBe(true);
      expect(first.names).toContain('exec_command');
      // Codex's namespaced tools are offered flat; its hosted web_search is omitted, not sent.
      expect(first.names.some((n) => n.startsWith('multi_agent_v1__'))).toBe(true);
      expect(first.names.some((n) => /web_search/.test(n))).toBe(false);
      // The tool ran and its output came back as the result of the call the model made.
      expect(calls).toHaveLength(2);
      expect(upstream(calls[1]!.body).toolResult).toContain('switchyard-tool-marker-7f3a');
    },
    180_000,
  );
});

describe('Claude Code over the Messages surface', () => {
  it('claude -p answers with ANTHROPIC_BASE_URL, ANTHROPIC_AUTH_TOKEN and ANTHROPIC_MODEL; Claude gets its body as written', async () => {
    const work = join(home, 'claude-work');
    await import('node:fs/promises').then((fs) => fs.mkdir(work, { recursive: true }));
    sim.clearRequests();
    const r = await runCli(
      claudeBin,
      ['-p', 'Say hello'],
      {
        HOME: home,
        ANTHROPIC_BASE_URL: gw.url,
        ANTHROPIC_AUTH_TOKEN: API_KEY,
        ANTHROPIC_MODEL: 'claude-coder',
      },
      work,
    );
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).toContain('Simulated anthropic/claude-haiku-4-5');
    const calls = sim.requests().filter((q) => q.provider === 'anthropic');
    const main = calls.find((q) => ((q.body as { tools?: unknown[] }).tools?.length ?? 0) > 0)!;
    const body = main.body as { max_tokens: number; tools: unknown[]; stream?: boolean };
    console.log(
      `claude -p: ${calls.length} provider calls, main upstream body ${JSON.stringify(body).length} bytes, ` +
        `${body.tools.length} tools, max_tokens ${body.max_tokens}`,
    );
    expect(body.tools.length).toBeGreaterThanOrEqual(12);
    expect(body.max_tokens).toBe(32000);
    expect(body.stream).toBe(true);
    // An anthropic slot gets Claude Code's body as written: its system blocks with cache_control,
    // adaptive thinking, context editing, effort, system turns mid-conversation, and its betas.
    const native = main.body as {
      system: { type: string; cache_control?: unknown }[];
      messages: { role: string }[];
    };
    expect(native.system.some((b) => b.cache_control)).toBe(true);
    expect(main.body).toMatchObject({
      thinking: { type: 'adaptive' },
      context_management: { edits: [{ type: expect.stringMatching(/^clear_thinking_/) }] },
    });
    expect(native.messages.some((m) => m.role === 'system')).toBe(true);
    expect(main.headers['anthropic-beta']).toContain('claude-code-20250219');
    expect(main.headers['anthropic-beta']).toMatch(/mid-conversation-(system|tool-changes)-/);
    // Its tool search: a deferred tool, which Claude is given with the beta that allows it.
    expect((main.body as { tools: { defer_loading?: boolean }[] }).tools.some((t) => t.defer_loading)).toBe(
      true,
    );
    expect(main.headers['anthropic-beta']).toContain('advanced-tool-use-');
  }, 180_000);

  it('claude -p on a workflow whose provider is not Claude: the translated request carries every tool, deferred ones up front', async () => {
    const work = join(home, 'claude-openai-work');
    await import('node:fs/promises').then((fs) => fs.mkdir(work, { recursive: true }));
    sim.clearRequests();
    const r = await runCli(
      claudeBin,
      ['-p', 'Say hello'],
      {
        HOME: home,
        ANTHROPIC_BASE_URL: gw.url,
        ANTHROPIC_AUTH_TOKEN: API_KEY,
        ANTHROPIC_MODEL: 'claude-on-openai',
      },
      work,
    );
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).toContain('Simulated openai/gpt-4o-mini');
    const main = sim
      .requests()
      .filter((q) => q.provider === 'openai')
      .map((q) => upstream(q.body))
      .find((u) => u.names.length > 0)!;
    console.log(`claude -p on an OpenAI slot: ${main.names.length} tools upstream`);
    expect(main.names).toContain('ToolSearch');
    expect(main.names.length).toBeGreaterThanOrEqual(12);
  }, 180_000);
});
