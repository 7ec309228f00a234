/**
 * Codex CLI and Claude Code, installed on demand into .cache/clis (not dev dependencies: their
 * native binaries are ~400 MB and ~240 MB, too heavy for every `npm install` of the project).
 * Pinned to the versions these tests were written against; `--ignore-scripts` because both run
 * from the platform binary their optional dependency ships.
 */
import { execFile } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export const CLI_DIR = resolve(import.meta.dirname, '../../../.cache/clis');
export const CLI_VERSIONS = { '@openai/codex': '0.171.0', '@anthropic-ai/claude-code': '2.1.332' } as const;

export const codexBin = resolve(CLI_DIR, 'node_modules/.bin/codex');
export const claudeBin = resolve(CLI_DIR, 'node_modules/.bin/claude');

async function installedVersion(pkg: string): Promise<string | undefined> {
  const file = resolve(CLI_DIR, 'node_modules', pkg, 'package.json');
  if (!existsSync(file)) return undefined;
  const { readFile } = await import('node:fs/promises');
  return (JSON.parse(await readFile(file, 'utf8')) as { version: string }).version;
}

export async function ensureClis(): Promise<void> {
  const missing: string[] = [];
  for (const [pkg, version] of Object.entries(CLI_VERSIONS))
    if ((await installedVersion(pkg)) !== version) missing.push(`${pkg}@${version}`);
  if (missing.length === 0 && existsSync(codexBin) && claudeReady()) return;
  await mkdir(CLI_DIR, { recursive: true });
  await writeFile(
    resolve(CLI_DIR, 'package.json'),
    JSON.stringify({ private: true, dependencies: CLI_VERSIONS }),
  );
  await run('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--prefix', CLI_DIR], {
    cwd: CLI_DIR,
    timeout: 600_000,
    maxBuffer: 16 * 1024 * 1024,
  });
  // Claude Code's own postinstall puts its platform binary in place of a placeholder; npm does not
  // run it here (scripts are off), so it runs by itself, and only it.
  if (!claudeReady())
    await run(process.execPath, [resolve(CLI_DIR, 'node_modules/@anthropic-ai/claude-code/install.cjs')], {
      cwd: resolve(CLI_DIR, 'node_modules/@anthropic-ai/claude-code'),
      timeout: 120_000,
    });
}

/** The claude binary is the platform's (megabytes), not the placeholder the package ships. */
function claudeReady(): boolean {
  const exe = resolve(CLI_DIR, 'node_modules/@anthropic-ai/claude-code/bin/claude.exe');
  return existsSync(claudeBin) && existsSync(exe) && statSync(exe).size > 1_000_000;
}

/** Runs a CLI with exactly this environment (no inherited keys, proxies or home), stdin closed. */
export async function runCli(
  bin: string,
  args: string[],
  env: Record<string, string>,
  cwd: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = execFile(
      bin,
      args,
      {
        cwd,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
        timeout: 120_000,
        maxBuffer: 8 * 1024 * 1024,
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
        done({ code, stdout, stderr });
      },
    );
    child.stdin?.end();
  });
}
