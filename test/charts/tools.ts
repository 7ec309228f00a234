/**
 * The chart tests' tools: helm and kubeconform built from Go modules by `make chart-tools`
 * (mk/helm.mk), promtool from Debian's prometheus package, and the rendering helpers they share.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

export const root = resolve(fileURLToPath(import.meta.url), '../../..');
export const CHART = join(root, 'charts/switchyard');
export const CRD_CHART = join(root, 'charts/switchyard-crds');
export const FULL_VALUES = join(root, 'test/charts/values-full.yaml');
export const GOLDEN_DIR = join(root, 'test/charts/golden');
export const HELM = join(root, '.cache/bin/helm');
export const KUBECONFORM = join(root, '.cache/bin/kubeconform');
/** The one value the chart cannot default: where Redis is. */
export const REQUIRED_VALUES = ['--set', 'redis.url=redis://redis.example:6379'] as const;
export const RELEASE = 'switchyard';
export const NAMESPACE = 'switchyard-system';

export interface Run {
  stdout: string;
  stderr: string;
  code: number;
}

export function run(
  cmd: string,
  args: readonly string[],
  opts: { input?: string; env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {},
): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(cmd, args, {
      env: opts.env ?? process.env,
      cwd: opts.cwd ?? root,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 120_000);
    child.on('error', (err) => {
      clearTimeout(timer);
      fail(err);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      done({ stdout, stderr: signal ? `${stderr}\nkilled by ${signal}` : stderr, code: code ?? 1 });
    });
    child.stdin.on('error', () => {});
    child.stdin.end(opts.input ?? '');
  });
}

let building: Promise<void> | undefined;

/** Builds helm and kubeconform once per pinned version (`make chart-tools`, a no-op when built). */
export function buildChartTools(): Promise<void> {
  building ??= run('make', ['-s', '-C', root, 'chart-tools'], { timeoutMs: 30 * 60_000 }).then((r) => {
    if (r.code !== 0) throw new Error(`make chart-tools failed (${r.code}):\n${r.stdout}\n${r.stderr}`);
  });
  return building;
}

export async function helm(args: readonly string[], opts: { env?: NodeJS.ProcessEnv } = {}): Promise<Run> {
  await buildChartTools();
  return run(HELM, args, {
    ...opts,
    env: {
      ...process.env,
      ...opts.env,
      HELM_CACHE_HOME: helmHome('cache'),
      HELM_CONFIG_HOME: helmHome('config'),
      HELM_DATA_HOME: helmHome('data'),
    },
  });
}

/** Helm keeps its own state out of the user's home, under .cache/helm. */
const helmHome = (what: string) => join(root, '.cache/helm', what);

/** `helm <args>`, throwing with helm's stderr when it fails. */
export async function helmOk(
  args: readonly string[],
  opts: { env?: NodeJS.ProcessEnv } = {},
): Promise<string> {
  const r = await helm(args, opts);
  if (r.code !== 0) throw new Error(`helm ${args.join(' ')} failed (${r.code}):\n${r.stderr}`);
  return r.stdout;
}

/** `helm template` of a chart as the test release in the test namespace. */
export function template(chart: string, values: readonly string[] = []): Promise<string> {
  return helmOk(['template', RELEASE, chart, '--namespace', NAMESPACE, ...values]);
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  [field: string]: unknown;
}

/** The objects of a multi-document YAML stream (empty documents dropped); a YAML error throws. */
export function parseObjects(text: string): KubeObject[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length) throw new Error(`invalid YAML: ${doc.errors.map((e) => e.message).join('; ')}`);
      return doc.toJS() as KubeObject | null;
    })
    .filter((o): o is KubeObject => o !== null);
}

export function find(objects: readonly KubeObject[], kind: string, name?: string): KubeObject {
  const found = objects.find((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  if (!found) throw new Error(`no ${kind}${name ? ` ${name}` : ''} in the rendered chart`);
  return found;
}

/** promtool from $PROMTOOL, PATH or Debian's /usr/bin (apt-get install prometheus). */
export function locatePromtool(): string {
  const candidates = [
    process.env.PROMTOOL,
    ...(process.env.PATH ?? '').split(delimiter).map((d) => (d ? join(d, 'promtool') : undefined)),
    '/usr/bin/promtool',
  ];
  const found = candidates.find((c): c is string => !!c && existsSync(c));
  if (!found)
    throw new Error(
      'promtool not found ($PROMTOOL, PATH or /usr/bin/promtool): apt-get install -y --no-install-recommends prometheus',
    );
  return found;
}
