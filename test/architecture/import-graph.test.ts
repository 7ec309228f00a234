import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { buildImportGraph, cyclesOf, importsOf, loopThrough } from './import-graph.ts';

// No import cycle in the product's code, type-only imports included: each layer builds on the ones
// below it and nothing below reaches back up (tracing at the bottom takes plain values).

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const DIRS = ['gateway/src', 'operator/src', 'contract', 'devkit', 'embedded'];

describe('the import graph', () => {
  it('finds a cycle when there is one (the detector can fail)', () => {
    expect(
      cyclesOf([
        { from: 'a', to: 'b' },
        { from: 'b', to: 'a' },
      ]),
    ).toEqual([['a', 'b']]);
    expect(cyclesOf([{ from: 'a', to: 'a' }])).toEqual([['a']]);
    expect(
      cyclesOf([
        { from: 'a', to: 'b' },
        { from: 'b', to: 'c' },
      ]),
    ).toEqual([]);
    const loop = [
      { from: 'a', to: 'b' },
      { from: 'b', to: 'c' },
      { from: 'c', to: 'a' },
      { from: 'c', to: 'd' },
    ];
    expect(cyclesOf(loop)).toEqual([['a', 'b', 'c']]);
    expect(loopThrough(['a', 'b', 'c'], loop)).toEqual(['a', 'b', 'c', 'a']);
  });

  it('reads every kind of import, and none from a comment, a string or a regex', () => {
    const src = [
      "import { a } from './a.ts';",
      "import type { B } from './b.ts';",
      "import { type C, type D } from './c.ts';",
      "import e, { f } from '#gateway/e';",
      "import './side.ts';",
      "export { g } from './g.ts';",
      "export type * from './h.ts';",
      'export {',
      '  i,',
      "} from './i.ts';",
      "type J = import('./j.ts').J;",
      "const k = await import('./k.ts');",
      "// import { no } from './comment.ts';",
      "/* export * from './block.ts'; import('./block2.ts') */",
      "const re = /['\"`]\\/\\//; // import x from './after-regex.ts'",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the source under test holds a template literal
      "const t = `${'}'}//${{ a: 1 }.a}`; // import('./after-template.ts')",
      "const l = a / 2; import { l } from './l.ts';",
    ].join('\n');
    const refs = importsOf(src).sort((x, y) => (x.specifier < y.specifier ? -1 : 1));
    expect(refs).toEqual([
      { specifier: '#gateway/e', typeOnly: false },
      { specifier: './a.ts', typeOnly: false },
      { specifier: './b.ts', typeOnly: true },
      { specifier: './c.ts', typeOnly: true },
      { specifier: './g.ts', typeOnly: false },
      { specifier: './h.ts', typeOnly: true },
      { specifier: './i.ts', typeOnly: false },
      { specifier: './j.ts', typeOnly: true },
      { specifier: './k.ts', typeOnly: false },
      { specifier: './l.ts', typeOnly: false },
      { specifier: './side.ts', typeOnly: false },
    ]);
  });

  const graph = buildImportGraph(ROOT, DIRS);

  it('has no cycle in gateway, operator, contract, devkit and embedded', () => {
    const cycles = cyclesOf(graph.edges);
    const typeOnly = graph.edges.filter((e) => e.typeOnly).length;
    console.log(
      `import graph: ${graph.files.length} files, ${graph.edges.length} edges (${typeOnly} type-only), ${cycles.length} cycles`,
    );
    // A specifier of ours that resolves to no file means the reader misread something.
    expect(graph.unresolved).toEqual([]);
    expect(graph.files.length).toBeGreaterThan(200);
    expect(graph.edges.length).toBeGreaterThan(graph.files.length);
    const report = cycles.map(
      (c) => `${c.length} files: ${loopThrough(c, graph.edges).join(' -> ')}\n    ${c.join('\n    ')}`,
    );
    expect(report, `import cycles:\n  ${report.join('\n  ')}`).toEqual([]);
  });

  it('keeps tracing at the bottom: of the gateway it imports only modules that import nothing of it', () => {
    const TRACING = 'gateway/src/tracing/';
    const ours = (e: { to: string }) => !e.to.startsWith('contract/');
    const below = graph.edges.filter(
      (e) => e.from.startsWith(TRACING) && !e.to.startsWith(TRACING) && ours(e),
    );
    const reachingBack = below.flatMap(({ to }) =>
      graph.edges.filter((e) => e.from === to && ours(e)).map((e) => `${to} -> ${e.to}`),
    );
    expect(reachingBack).toEqual([]);
  });
});
