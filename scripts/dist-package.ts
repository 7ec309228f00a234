import { readFileSync, writeFileSync } from 'node:fs';

/**
 * Writes dist/package.json: the same `#` subpath imports as the source tree, pointing at the
 * compiled `.js` files, so `node dist/...` resolves `#contract` and friends without type stripping.
 */
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { imports: Record<string, string> };
const imports = Object.fromEntries(
  Object.entries(pkg.imports).map(([k, v]) => [k, v.replace(/\.ts$/, '.js')]),
);
writeFileSync('dist/package.json', `${JSON.stringify({ type: 'module', imports }, null, 2)}\n`);
