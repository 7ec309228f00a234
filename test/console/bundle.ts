import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { root } from './helpers.ts';

/** Where `make console` puts the console's build, which the gateway serves at /console/. */
export const CONSOLE_DIR = join(root, 'dist/console');

/** `make test` builds the console first; a suite run on its own builds it when it is missing. */
export async function ensureBundle(): Promise<void> {
  if (existsSync(join(CONSOLE_DIR, 'index.html'))) return;
  await promisify(execFile)(join(root, 'node_modules/.bin/vite'), ['build', '-c', 'console/vite.config.ts'], {
    cwd: root,
  });
}
