/**
 * Writes the goals table of the latest `make bench` run into docs/benchmarks.md, between its
 * `<!-- goals:begin -->` and `<!-- goals:end -->` markers (make bench runs it after a run).
 *   node scripts/bench-goals.ts [--results bench/results/latest] [--doc docs/benchmarks.md] [--check]
 * Reads the run's report, `<results>.md` (run.ts writes it beside the JSON, which is not committed),
 * so a checkout without the JSON reads the same table. --check writes nothing and exits 1 when the
 * document's table is not the report's.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { goalsBlock, withGoals } from '../bench/goals.ts';

const root = join(import.meta.dirname, '..');
const { values } = parseArgs({
  options: {
    results: { type: 'string', default: join(root, 'bench/results/latest') },
    doc: { type: 'string', default: join(root, 'docs/benchmarks.md') },
    check: { type: 'boolean', default: false },
  },
});

const source = `${resolve(values.results)}.md`;
const report = readFileSync(source, 'utf8');
const doc = resolve(values.doc);
const before = readFileSync(doc, 'utf8');
const after = withGoals(before, goalsBlock(report, relative(root, source)));
if (values.check) {
  if (after !== before) {
    process.stderr.write(
      `${relative(root, doc)}: its goals table is not the one of ${relative(root, source)}\n`,
    );
    process.exit(1);
  }
} else if (after !== before) {
  writeFileSync(doc, after);
  process.stdout.write(`${relative(root, doc)}: goals table of ${relative(root, source)}\n`);
}
