import { readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';

const here = fileURLToPath(new URL('.', import.meta.url));
const outDir = resolve(here, '../dist/console');

/** Writes `<file>.gz` beside each text file, so the gateway sends compressed files without compressing per request. */
function precompress(): Plugin {
  return {
    name: 'switchyard-precompress',
    apply: 'build',
    async writeBundle(_opts, bundle) {
      const names = [...Object.keys(bundle), 'index.html'].filter((n) => /\.(js|css|html|svg)$/.test(n));
      await Promise.all(
        [...new Set(names)].map(async (n) => {
          const path = join(outDir, n);
          await writeFile(`${path}.gz`, await promisify(gzip)(await readFile(path), { level: 9 }));
        }),
      );
    },
  };
}

// Relative URLs (`base: './'`) so the same build works at /console/ behind any path prefix; no
// module-preload polyfill, so the page carries no inline script and a strict CSP holds.
export default defineConfig({
  root: here,
  base: './',
  logLevel: 'warn',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir,
    emptyOutDir: true,
    target: 'es2022',
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    reportCompressedSize: false,
  },
  plugins: [precompress()],
});
