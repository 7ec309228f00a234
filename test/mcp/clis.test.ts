/**
 * Claude Code and Codex CLI using the gateway's MCP endpoint as their docs/mcp.md entries configure
 * it (a bearer key as a header; Codex's bearer_token_env_var), with their models on the gateway too:
 * the provider simulator is scripted to call the MCP tool, the call goes through the gateway to the
 * upstream MCP server, and its result comes back to the model in the CLI's next request.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claudeBin, codexBin, ensureClis, runCli } from '../gateway/agents/clis.ts';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { apiKey, mcpServer, project, provider, workflow } from '../harness/manifests.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import { startUpstream, type Upstream } from './upstream.ts';

const KEY = 'sy_live_AgentKeyForMcpAndModels0123456789ab';
let sim: Simulator;
let upstream: Upstream;
let gw: RunningGateway;
let home: string;

beforeAll(async () => {
  await ensureClis();
  sim = await startSimulator();
  upstream = await startUpstream('alpha');
  gw = await startGateway([
    project('app', { outboundFetch: { allowPrivateNetworks: true } }),
    ...apiKey('agent', KEY, { scopes: ['ai', 'mcp'], toolGrants: ['alpha__echo'] }),
    ...provider('oai', 'openai', sim.url, ['gpt-4o-mini']),
    ...provider('claude', 'anthropic', sim.url, ['claude-haiku-4-5']),
    workflow('coder', { provider: 'oai', model: 'gpt-4o-mini', hostedTools: { default: 'omit' } }),
    workflow('claude-coder', { provider: 'claude', model: 'claude-haiku-4-5' }),
    ...mcpServer('alpha', upstream.url, { spec: { toolPrefix: 'alpha' } }),
  ]);
  home = await mkdtemp(join(tmpdir(), 'switchyard-mcp-clis-'));
}, 600_000);
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  await sim?.close();
  if (home) await rm(home, { recursive: true, force: true });
});

/** Every tool name offered and every tool result sent back, in either provider's shape. */
function seen(body: unknown): { names: string[]; results: string } {
  const b = body as {
    tools?: { name?: string; function?: { name: string } }[];
    messages?: { role: string; content?: unknown }[];
    input?: unknown[];
  };
  return {
    names: (b.tools ?? []).map((t) => t.function?.name ?? t.name ?? ''),
    results: JSON.stringify(b.messages ?? b.input ?? []),
  };
}

describe('coding agents through /v1/mcp', () => {
  it('Claude Code (claude -p --mcp-config --strict-mcp-config) calls an MCP tool through the gateway', async () => {
    const work = join(home, 'claude');
    await mkdir(work, { recursive: true });
    const config = join(home, 'mcp.json');
    await writeFile(
      config,
      JSON.stringify({
        mcpServers: {
          sy: { type: 'http', url: `${gw.url}/v1/mcp`, headers: { Authorization: `Bearer ${KEY}` } },
        },
      }),
    );
    sim.clearRequests();
    // Claude Code defers MCP tools behind its tool search: the model finds the tool, then calls it.
    sim.addFault({
      match: { provider: 'anthropic' },
      times: 1,
      toolCall: { name: 'ToolSearch', args: { query: 'select:mcp__sy__alpha__echo', max_results: 5 } },
    });
    sim.addFault({
      match: { provider: 'anthropic' },
      times: 1,
      toolCall: { name: 'mcp__sy__alpha__echo', args: { text: 'from-claude' } },
    });
    const before = upstream.calls.get('echo') ?? 0;
    const r = await runCli(
      claudeBin,
      [
        '-p',
        'Echo something',
        '--mcp-config',
        config,
        '--strict-mcp-config',
        '--allowedTools',
        'mcp__sy__alpha__echo',
      ],
      {
        HOME: home,
        ANTHROPIC_BASE_URL: gw.url,
        ANTHROPIC_AUTH_TOKEN: KEY,
        ANTHROPIC_MODEL: 'claude-coder',
        // How long Claude Code waits for an MCP server to connect; a loaded 2-core machine needs more.
        MCP_TIMEOUT: '60000',
      },
      work,
    );
    const calls = sim.requests().filter((q) => q.provider === 'anthropic');
    const offered = calls.flatMap((c) => seen(c.body).names).filter((n) => n.startsWith('mcp__'));
    console.log(
      `claude -p: exit ${r.code}, ${calls.length} provider calls, MCP tools offered: ${[...new Set(offered)].join(' ')}`,
    );
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const why = `${r.stdout}\n${r.stderr}`;
    expect(offered, why).toContain('mcp__sy__alpha__echo');
    expect((upstream.calls.get('echo') ?? 0) - before, why).toBe(1);
    expect(
      calls.some((c) => seen(c.body).results.includes('alpha:from-claude')),
      why,
    ).toBe(true);
  }, 180_000);

  it('Codex (codex exec with an mcp_servers entry, bearer_token_env_var) calls an MCP tool through the gateway', async () => {
    const codexHome = join(home, 'codex-home');
    const work = join(home, 'codex-work');
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
        '',
        '[mcp_servers.sy]',
        `url = "${gw.url}/v1/mcp"`,
        'bearer_token_env_var = "SWITCHYARD_API_KEY"',
      ].join('\n'),
    );
    sim.clearRequests();
    // Codex offers MCP tools as `mcp__<server>__<tool>` (flattened by the Responses surface when namespaced).
    sim.addFault({
      match: { provider: 'openai' },
      times: 1,
      toolCall: { name: 'mcp__sy__alpha__echo', args: { text: 'from-codex' } },
    });
    const before = upstream.calls.get('echo') ?? 0;
    const r = await runCli(
      codexBin,
      [
        'exec',
        '--skip-git-repo-check',
        // MCP tool calls need an approval in exec mode; none can be given without a terminal.
        '--dangerously-bypass-approvals-and-sandbox',
        'Echo something',
      ],
      { HOME: home, CODEX_HOME: codexHome, SWITCHYARD_API_KEY: KEY },
      work,
    );
    const calls = sim.requests().filter((q) => q.provider === 'openai');
    const offered = calls.flatMap((c) => seen(c.body).names).filter((n) => /alpha__echo/.test(n));
    console.log(
      `codex exec: exit ${r.code}, ${calls.length} provider calls, MCP tools offered: ${[...new Set(offered)].join(' ')}`,
    );
    expect(r.code, r.stderr + r.stdout).toBe(0);
    const why = `${r.stdout}\n${r.stderr}`;
    expect(offered.length, why).toBeGreaterThan(0);
    expect((upstream.calls.get('echo') ?? 0) - before, why).toBe(1);
    expect(
      calls.some((c) => seen(c.body).results.includes('alpha:from-codex')),
      why,
    ).toBe(true);
  }, 180_000);
});
