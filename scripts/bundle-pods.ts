/**
 * Each pod's entry point as one bundle, built from the compiled modules (run
 * `tsc -p tsconfig.build.json` first; `make build` does both):
 * - the gateway: `dist/gateway/src/main.js` → `dist/gateway/pod/main.js`;
 * - the operator: `dist/operator/src/main.js` → `dist/operator/pod/main.js`.
 *
 * Why: a pod that loads hundreds of module files keeps every file's source text resident (V8 holds
 * it for lazy compilation) and pays the module loader per file at start. One minified file, with
 * what a pod loads lazily (the gateway's job runner, the console's Kubernetes backend,
 * OpenTelemetry, the tokenizer table) in chunks of their own that are still loaded on first use,
 * idles lighter and starts sooner (docs/benchmarks-log.md, "A lean pod").
 *
 * The source map beside each file maps positions back (`node --enable-source-maps`). Modules a
 * pod requires by path at run time (undici's parts, `node:http`) still resolve from node_modules,
 * which the image keeps.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'rolldown';
import { podBundle } from './pod-bundle.ts';

const ROOT = join(import.meta.dirname, '..');

for (const pod of ['gateway', 'operator']) {
  const out = join(ROOT, 'dist', pod, 'pod');
  await rm(out, { recursive: true, force: true });
  await build(podBundle(join(ROOT, 'dist', pod, 'src/main.js'), out));
  process.stdout.write(`bundled the ${pod} pod into ${out}\n`);
}
