/**
 * How a pod's entry point is bundled: one minified ESM file per pod, what it loads lazily in chunks
 * of its own. `scripts/bundle-pods.ts` builds both pods with it; tests bundle from the sources with
 * the same options and check what goes in.
 */
import type { BuildOptions } from 'rolldown';

/**
 * @kubernetes/client-node's index re-exports its generated API classes and ~850 models, and the
 * bundler cannot prove those modules free of side effects, so it would keep them all (2.4 MB in
 * the operator's bundle). They are plain classes; only its polyfill runs code on load. Declared
 * pure, the bundle keeps the 16 modules the pods use: the kubeconfig, its authentication
 * providers and the request context.
 */
const moduleSideEffects = (id: string): boolean =>
  !id.includes('/@kubernetes/client-node/dist/') || id.endsWith('/polyfill.js');

export function podBundle(input: string, dir: string): BuildOptions {
  return {
    input,
    platform: 'node',
    logLevel: 'warn',
    treeshake: { moduleSideEffects },
    output: {
      dir,
      format: 'esm',
      sourcemap: true,
      // The maps point into dist/ and node_modules, which the image has; their text need not be copied.
      sourcemapExcludeSources: true,
      // Names kept: stack traces and `name` properties read as in the source.
      minify: { compress: true, mangle: false, codegen: true },
    },
  };
}
