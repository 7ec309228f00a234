import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderCrdFiles } from './build.ts';

/** crds/ at the repository root. */
export const CRDS_DIR = fileURLToPath(new URL('../../../crds/', import.meta.url));

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
