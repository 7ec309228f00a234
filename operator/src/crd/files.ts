import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CRD_HEADER, renderCrdFiles } from './build.ts';

/** crds/ at the repository root. */
export const CRDS_DIR = fileURLToPath(new URL('../../../crds/', import.meta.url));

/**
 * The same CRDs as templates of charts/switchyard-crds: Helm never upgrades what sits in a chart's
 * crds/ folder, but it does upgrade templates.
 */
export const CHART_CRDS_DIR = fileURLToPath(
  new URL('../../../charts/switchyard-crds/templates/crds/', import.meta.url),
);

const CHART_HEADER =
  '# Generated from operator/src/resources by `make crds` (the chart copy of crds/); do not edit.\n' +
  '# `make check` (operator/src/crd/generate.ts --check) fails when this file drifts from the zod schemas.\n';

/**
 * A crds/ file turned into a chart template: the release's labels join the generated one, and
 * `helm.sh/resource-policy: keep` (on by default) stops `helm uninstall` from deleting the CRDs and
 * with them every Workflow, ApiKey and Project in the cluster. Only the metadata block is templated;
 * a `{{` anywhere else would be read by Helm as a template action, so it is refused.
 */
export function toChartTemplate(file: string, content: string): string {
  if (!content.startsWith(CRD_HEADER)) throw new Error(`${file}: no generated header`);
  const body = content.slice(CRD_HEADER.length);
  if (body.includes('{{')) throw new Error(`${file}: contains "{{", which Helm would evaluate`);
  const labels = '  labels:\n    app.kubernetes.io/part-of: switchyard\n';
  const at = body.indexOf(`\n${labels}spec:\n`);
  if (at < 0) throw new Error(`${file}: metadata.labels is not the generated one`);
  const templated =
    '  labels:\n' +
    '    app.kubernetes.io/part-of: switchyard\n' +
    '    {{- include "switchyard-crds.labels" . | nindent 4 }}\n' +
    '  {{- if or .Values.keep .Values.annotations }}\n' +
    '  annotations:\n' +
    '    {{- if .Values.keep }}\n' +
    '    helm.sh/resource-policy: keep\n' +
    '    {{- end }}\n' +
    '    {{- with .Values.annotations }}\n' +
    '    {{- toYaml . | nindent 4 }}\n' +
    '    {{- end }}\n' +
    '  {{- end }}\n';
  return `${CHART_HEADER}${body.slice(0, at + 1)}${templated}${body.slice(at + 1 + labels.length)}`;
}

/** Every chart template: name inside CHART_CRDS_DIR → content. */
export function renderChartCrdFiles(crdFiles: Map<string, string> = renderCrdFiles()): Map<string, string> {
  return new Map([...crdFiles].map(([file, content]) => [file, toChartTemplate(file, content)]));
}

/** Where generated CRDs live, with what belongs there. */
export interface CrdTarget {
  dir: string;
  files: Map<string, string>;
}

/** crds/ and the chart copy, from one rendering of the schemas. */
export function crdTargets(): CrdTarget[] {
  const files = renderCrdFiles();
  return [
    { dir: CRDS_DIR, files },
    { dir: CHART_CRDS_DIR, files: renderChartCrdFiles(files) },
  ];
}

export interface CrdDrift {
  file: string;
  problem: 'missing' | 'differs' | 'extra';
  detail: string;
}

/** Files in `dir` (hidden files such as .gitkeep are not ours and are ignored). */
function listFiles(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => !e.name.startsWith('.'))
      .map((e) => e.name)
      .sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

function firstDifference(actual: string, expected: string): string {
  const a = actual.split('\n');
  const e = expected.split('\n');
  for (let i = 0; i < Math.max(a.length, e.length); i++) {
    if (a[i] !== e[i])
      return `line ${i + 1}: expected ${JSON.stringify(e[i] ?? '<end of file>')}, found ${JSON.stringify(a[i] ?? '<end of file>')}`;
  }
  return 'contents differ';
}

/**
 * Compares `dir` with what the generator produces: every expected file must exist with the same
 * bytes, and no other file may be there. An empty result means no drift.
 */
export function diffCrds(
  dir: string = CRDS_DIR,
  expected: Map<string, string> = renderCrdFiles(),
): CrdDrift[] {
  const drift: CrdDrift[] = [];
  const present = new Set(listFiles(dir));
  for (const [file, content] of expected) {
    if (!present.has(file)) {
      drift.push({ file, problem: 'missing', detail: 'not generated yet' });
      continue;
    }
    const actual = readFileSync(join(dir, file), 'utf8');
    if (actual !== content)
      drift.push({ file, problem: 'differs', detail: firstDifference(actual, content) });
  }
  for (const file of present)
    if (!expected.has(file)) drift.push({ file, problem: 'extra', detail: 'not produced by the generator' });
  return drift;
}

/** Writes the generated files into `dir` and removes files the generator no longer produces. */
export function writeCrds(
  dir: string = CRDS_DIR,
  expected: Map<string, string> = renderCrdFiles(),
): string[] {
  mkdirSync(dir, { recursive: true });
  for (const file of listFiles(dir)) if (!expected.has(file)) rmSync(join(dir, file));
  const written: string[] = [];
  for (const [file, content] of expected) {
    writeFileSync(join(dir, file), content);
    written.push(file);
  }
  return written;
}
