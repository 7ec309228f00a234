import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { extname, join, relative, sep } from 'node:path';

/**
 * The console's pages run no inline script or style and talk only to this origin; a script that
 * got into the page through data (a log body, a workflow description) has nowhere to run or send.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
};

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
};

export interface BundleFile {
  path: string;
  type: string;
  /** Hashed file names never change content: cached for a year. */
  immutable: boolean;
  /** A gzip copy (`<file>.gz`) the build wrote next to it. */
  gzip: boolean;
}

/** The build is there when its index.html is. */
export const bundleReady = (dir: string): boolean => existsSync(join(dir, 'index.html'));

/**
 * The bundle's files by URL path (`index.html`, `assets/index-3f2a.js`): read once at start, so a
 * request can only ever name a file the build produced (no path from the URL reaches the disk).
 */
export async function indexBundle(dir: string): Promise<Map<string, BundleFile>> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const names = new Set(entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name)));
  const files = new Map<string, BundleFile>();
  for (const path of names) {
    const type = TYPES[extname(path)];
    if (!type) continue;
    const url = relative(dir, path).split(sep).join('/');
    files.set(url, {
      path,
      type,
      immutable: url.startsWith('assets/'),
      gzip: names.has(`${path}.gz`),
    });
  }
  return files;
}
