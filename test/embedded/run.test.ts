import { type ChildProcess, spawn } from 'node:child_process';
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBundle } from '../console/bundle.ts';

// `make run` as a user runs it: the embedded entry point as a child process, real ports, the
// example folder plus deliberately broken files. It must name each problem and keep serving.
const KEY = 'sy_live_HEUADsAxMSNV8on9X3NkkU2lkBArrZ1v';
const NODE = join(process.cwd(), 'node_modules/.bin/node');

let dir: string;
let child: ChildProcess;
let output = '';
let base = '';

async function waitFor(pattern: RegExp, ms: number): Promise<RegExpMatchArray> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    const m = output.match(pattern);
    if (m) return m;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${pattern}; output so far:\n${output}`);
}

beforeAll(async () => {
  await ensureBundle();
  dir = await mkdtemp(join(tmpdir(), 'switchyard-embedded-'));
  await cp('examples', dir, { recursive: true });
  await writeFile(join(dir, 'broken.yaml'), 'apiVersion: v1\nkind: [unclosed\n');
  await writeFile(
    join(dir, 'unknown.yaml'),
    'apiVersion: example.com/v1\nkind: Gadget\nmetadata:\n  name: g\n',
  );
  await writeFile(
    join(dir, 'bad-workflow.yaml'),
    'apiVersion: switchyard.dev/v1alpha1\nkind: Workflow\nmetadata:\n  name: bad\n  namespace: acme\nspec:\n  projectRef: {name: storefront}\n  requestType: telepathy\n  provider: openai\n  model: gpt-4o\n',
  );
  child = spawn(
    NODE,
    [
      '--disable-warning=ExperimentalWarning',
      'embedded/main.ts',
      '--config',
      dir,
      '--port',
      '0',
      '--metrics-port',
      '0',
    ],
    {
      env: { ...process.env, LOG_LEVEL: 'info' },
    },
  );
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const m = await waitFor(/API:\s+(http:\/\/localhost:\d+)/, 20_000);
  base = m[1]!;
});

afterAll(async () => {
  child?.kill('SIGTERM');
  await rm(dir, { recursive: true, force: true });
});

describe('embedded mode (make run)', () => {
  it('prints the URL and a call that works', () => {
    expect(output).toContain('Try it:');
    expect(output).toContain(`Bearer ${KEY}`);
    expect(output).toMatch(/"workflow":"support-chat"/);
  });

  it('prints the console URL with a one-time sign-in link, which signs in once', async () => {
    const m = output.match(/Console: (http:\/\/localhost:\d+)\/console\/#\/link\/(syl_[A-Za-z0-9_-]+)/);
    expect(m?.[1]).toBe(base);
    const signIn = () =>
      fetch(`${base}/console/api/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ link: m![2] }),
      });
    const first = await signIn();
    expect(first.status).toBe(200);
    expect(first.headers.get('set-cookie')).toMatch(
      /^sy_console=[^;]+; Path=\/; .*HttpOnly; SameSite=Strict/,
    );
    expect((await signIn()).status).toBe(401);
  });

  it('names the file of invalid YAML, the unknown kind, and the file, object and field of a schema failure', async () => {
    // Log lines are flushed asynchronously by pino, so they may arrive after the banner.
    await waitFor(/broken\.yaml[^\n]*invalid YAML/, 5000);
    await waitFor(/unknown\.yaml: Gadget g[^\n]*unknown kind/, 5000);
    await waitFor(/bad-workflow\.yaml: Workflow acme\/bad: field spec\.requestType/, 5000);
  });

  it('serves the valid rest: a wrapped success from the example chat workflow', async () => {
    const res = await fetch(`${base}/v1/ai`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        workflow: 'support-chat',
        format: 'wrapped',
        messages: [{ role: 'user', content: 'Hello!' }],
      }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      data: { object: string };
      meta: { status: string; used_model: string };
    };
    expect(body.meta.status).toBe('success');
    expect(body.meta.used_model).toBe('gpt-4o-mini');
    expect(body.data.object).toBe('chat.completion');
  });

  it("answers the issue's plain `curl -d` call (JSON sent with curl's default form Content-Type)", async () => {
    const res = await fetch(`${base}/v1/ai`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: JSON.stringify({
        workflow: 'support-chat',
        format: 'wrapped',
        messages: [{ role: 'user', content: 'Hi' }],
      }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ meta: { status: 'success', workflow: 'support-chat' } });
  });

  it('applies an edited file without a restart', async () => {
    const wf = join(dir, '30-workflows.yaml');
    const { readFile } = await import('node:fs/promises');
    await writeFile(wf, (await readFile(wf, 'utf8')).replace('model: gpt-4o-mini', 'model: gpt-4o'));
    const until = Date.now() + 5000;
    let used = '';
    while (Date.now() < until && used !== 'gpt-4o') {
      const res = await fetch(`${base}/v1/ai`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ workflow: 'support-chat', messages: [{ role: 'user', content: 'Hi' }] }),
      });
      used = res.headers.get('x-service-used-model') ?? '';
      if (used !== 'gpt-4o') await new Promise((r) => setTimeout(r, 100));
    }
    expect(used).toBe('gpt-4o');
  });

  it('refuses a missing key with 401', async () => {
    const res = await fetch(`${base}/v1/ai`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ error: 'missing_api_key' });
  });
});
