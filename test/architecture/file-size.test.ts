import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * No source file grows past what a reader takes in at once: every .ts file of the gateway, the
 * operator and the contract they share is at most MAX_LINES long. A file that outgrows it is split
 * into files named for what they hold.
 */
const MAX_LINES = 400;
const ROOT = resolve(import.meta.dirname, '../..');
const TREES = ['gateway', 'operator', 'contract'];

function* tsFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules') yield* tsFiles(path);
    } else if (entry.isFile() && entry.name.endsWith('.ts')) yield path;
  }
}

/** Lines as `wc -l` counts them: a last line without its newline counts too. */
const lineCount = (text: string): number => {
  if (text === '') return 0;
  const newlines = text.split('\n').length - 1;
  return text.endsWith('\n') ? newlines : newlines + 1;
};

describe('file size', () => {
  it(`every .ts file under ${TREES.join(', ')} has at most ${MAX_LINES} lines`, () => {
    const files = TREES.flatMap((tree) => [...tsFiles(join(ROOT, tree))]);
    expect(files.length).toBeGreaterThan(100);
    const offenders = files
      .map((file) => ({ file: relative(ROOT, file), lines: lineCount(readFileSync(file, 'utf8')) }))
      .filter((f) => f.lines > MAX_LINES)
      .sort((a, b) => b.lines - a.lines)
      .map((f) => `${f.file}: ${f.lines} lines`);
    expect(offenders, `files over ${MAX_LINES} lines:\n${offenders.join('\n')}`).toEqual([]);
  });
});
