/**
 * The gateway pod's entry point as one bundle: `dist/gateway/pod/main.js`, built from the compiled
 * `dist/gateway/src/main.js` (run `tsc -p tsconfig.build.json` first; `make build` does both).
 *
 * Why: a pod that loads ~700 module files keeps every file's source text resident (V8 holds it for
 * lazy compilation) and pays the module loader per file at start. One minified file, with what the
 * pod loads lazily (the job runner, the console's Kubernetes backend, OpenTelemetry, the tokenizer
 * table) in chunks of their own that are still loaded on first use, idles ~11 MB lighter and starts
 * ~200 ms sooner (docs/benchmarks.md, "What a gateway pod loads").
 *
 * Identifiers are not mangled, so stack traces and `name` properties read as in the source; the
 * source map beside each file maps positions back (`node --enable-source-maps`). Modules the
 * gateway requires by path at run time (undici's parts, `node:http`) still resolve from
 * node_modules, which the image keeps.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'rolldown';

const ROOT = join(import.meta.dirname, '..');
const OUT = join(ROOT, 'dist/gateway/pod');

await rm(OUT, { recursive: true, force: true });
await build({
  input: join(ROOT, 'dist/gateway/src/main.js'),
  platform: 'node',
  logLevel: 'warn',
  output: {
    dir: OUT,
    format: 'esm',
    sourcemap: true,
    // The maps point into dist/ and node_modules, which the image has; their text need not be copied.
    sourcemapExcludeSources: true,
    minify: { compress: true, mangle: false, codegen: true },
  },
});
process.stdout.write(`bundled the gateway pod into ${OUT}\n`);
