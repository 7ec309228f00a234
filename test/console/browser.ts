/** A real chromium for the console suite: Debian's package, driven by playwright-core (no download). */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    // Containers run the suites as root, where chromium's sandbox cannot start.
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
}

/** What must never happen on a console page: a CSP violation, an uncaught error, injected script running. */
export interface Watched {
  page: Page;
  context: BrowserContext;
  problems: string[];
  /** CSP violations the page itself saw (securitypolicyviolation events). */
  violations(): Promise<string[]>;
}

export async function openPage(browser: Browser, colorScheme: 'light' | 'dark' = 'light'): Promise<Watched> {
  const context = await browser.newContext({ colorScheme, viewport: { width: 1100, height: 720 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !/status of 4\d\d/.test(msg.text()))
      problems.push(`console: ${msg.text()}`);
  });
  page.on('dialog', (d) => {
    problems.push(`dialog opened: ${d.message()}`);
    void d.dismiss();
  });
  // Runs before the page's own scripts, outside its CSP (DevTools protocol).
  await page.addInitScript(`
    window.__violations = [];
    document.addEventListener('securitypolicyviolation', (e) =>
      window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));`);
  return {
    page,
    context,
    problems,
    violations: () => page.evaluate<string[]>('window.__violations'),
  };
}

const axeSource = readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the page as it is now. */
export async function accessibilityProblems(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, so the page's CSP (no inline script) does not apply.
  await page.evaluate(await axeSource);
  const result = await page.evaluate<{
    violations: { id: string; impact: string | null; nodes: { target: unknown }[] }[];
  }>("axe.run(document, { resultTypes: ['violations'] })");
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.nodes.map((n) => JSON.stringify(n.target)).join(', ')}`);
}
