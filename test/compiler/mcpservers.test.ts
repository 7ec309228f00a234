/** Compiling MCPServers into `projects[id].mcpServers` and ApiKey tool grants into the key table. */
import { describe, expect, it } from 'vitest';
import { hashApiKey, mcpHeaderSealContext, SealError, snapshot as snapshotSchema, unseal } from '#contract';
import { switchyardObject } from '#operator/resources/index';
import {
  API_KEY,
  BASE_CREATED,
  baseFixture,
  compile,
  type Fixture,
  get,
  inSnapshot,
  NS,
  OTHER_SEAL_KEY,
  SEAL_KEY,
} from './fixtures.ts';

const PROJECT_ID = `${NS}.shop`;
const TOKEN = 'mcp-PLAINTEXT-bearer-token-0001';
const HEADER_VALUE = 'mcp-PLAINTEXT-header-value-0002';

const server = (name: string, spec: Record<string, unknown>, created = BASE_CREATED) => ({
  apiVersion: 'switchyard.dev/v1alpha1' as const,
  kind: 'MCPServer' as const,
  metadata: { name, namespace: NS, creationTimestamp: created },
  spec: { projectRef: { name: 'shop' }, url: 'https://mcp.example.com/mcp', ...spec },
});

function withServers(...servers: ReturnType<typeof server>[]): Fixture {
  const f = baseFixture();
  f.secrets.push({ namespace: NS, name: 'gh-token', data: { token: TOKEN, value: HEADER_VALUE } });
  f.objects.push(...servers);
  return f;
}

const verdict = (out: ReturnType<typeof compile>, name: string) => {
  const v = out.verdicts.find((x) => x.ref.kind === 'MCPServer' && x.ref.name === name);
  if (!v) throw new Error(`no verdict for MCPServer ${name}`);
  return v;
};

describe('MCPServer in the snapshot', () => {
  it('a bearer server: sealed Authorization header, prefix from the name, settings by tool', () => {
    const out = compile(
      withServers(
        server('github', {
          credentials: { bearer: { secretRef: { name: 'gh-token' } } },
          allowTools: ['search_*', 'get_issue', 'search_*'],
          denyTools: ['delete_*'],
          tools: [
            { name: 'search_code', priceUsd: '0.002', timeoutMs: 5000 },
            { name: 'get_issue', priceUsd: '0' },
          ],
          callsPerMinute: 120,
        }),
      ),
    );
    const s = out.snapshot.projects[PROJECT_ID]?.mcpServers['github'];
    expect(s).toMatchObject({
      name: 'github',
      source: `${NS}/github`,
      url: 'https://mcp.example.com/mcp',
      toolPrefix: 'github',
      allowTools: ['get_issue', 'search_*'],
      denyTools: ['delete_*'],
      tools: { search_code: { priceUsd: '0.002', timeoutMs: 5000 }, get_issue: { priceUsd: '0' } },
      timeoutMs: 30_000,
      callsPerMinute: 120,
    });
    expect(s?.headers.map((h) => h.name)).toEqual(['Authorization']);
    const context = mcpHeaderSealContext(PROJECT_ID, 'github', 'Authorization');
    expect(unseal(SEAL_KEY, context, s!.headers[0]!.value)).toBe(`Bearer ${TOKEN}`);
    expect(() => unseal(OTHER_SEAL_KEY, context, s!.headers[0]!.value)).toThrow(SealError);
    expect(() =>
      unseal(SEAL_KEY, mcpHeaderSealContext(PROJECT_ID, 'other', 'authorization'), s!.headers[0]!.value),
    ).toThrow(SealError);
    expect(JSON.stringify(out.snapshot)).not.toContain(TOKEN);
    expect(verdict(out, 'github')).toMatchObject({
      ok: true,
      details: { projectId: PROJECT_ID, toolPrefix: 'github' },
    });
    // What the gateway validates before swapping a snapshot in.
    expect(snapshotSchema.parse(out.snapshot).projects[PROJECT_ID]?.mcpServers['github']?.url).toBe(
      'https://mcp.example.com/mcp',
    );
  });

  it('a static header, an explicit prefix and no credentials at all', () => {
    const out = compile(
      withServers(
        server('docs-search', {
          toolPrefix: 'docs',
          credentials: { header: { headerName: 'X-Api-Key', secretRef: { name: 'gh-token', key: 'value' } } },
          timeoutMs: 1500,
        }),
        server('open', { url: 'http://10.0.0.5:8080/mcp' }),
        server('inside', { url: 'http://tools.internal.svc:8080/mcp', allowPrivateNetworks: true }),
      ),
    );
    const servers = out.snapshot.projects[PROJECT_ID]?.mcpServers ?? {};
    const docs = servers['docs-search'];
    expect(docs).toMatchObject({ toolPrefix: 'docs', timeoutMs: 1500, denyTools: [], tools: {} });
    expect(docs?.allowTools).toBeUndefined();
    expect(docs?.headers[0]?.name).toBe('X-Api-Key');
    expect(
      unseal(SEAL_KEY, mcpHeaderSealContext(PROJECT_ID, 'docs-search', 'x-api-key'), docs!.headers[0]!.value),
    ).toBe(HEADER_VALUE);
    // Private addresses compile: the SSRF guard decides when the gateway connects.
    expect(servers['open']).toMatchObject({
      url: 'http://10.0.0.5:8080/mcp',
      headers: [],
      toolPrefix: 'open',
    });
    // The per-server opt-in is written only when given, so other servers' snapshots stay as they were.
    expect(servers['open']?.allowPrivateNetworks).toBeUndefined();
    expect(servers['inside']?.allowPrivateNetworks).toBe(true);
  });

  it('a missing or unusable Secret leaves the server out and says why; the project keeps serving', () => {
    const f = withServers(
      server('missing', { credentials: { bearer: { secretRef: { name: 'nope' } } } }),
      server('nokey', { credentials: { bearer: { secretRef: { name: 'gh-token', key: 'absent' } } } }),
      server('crlf', { credentials: { bearer: { secretRef: { name: 'crlf' } } } }),
    );
    f.secrets.push({ namespace: NS, name: 'crlf', data: { token: 'abc\r\nX-Injected: 1' } });
    const out = compile(f);
    expect(verdict(out, 'missing')).toMatchObject({ ok: false, reason: 'SecretMissing' });
    expect(verdict(out, 'nokey')).toMatchObject({ ok: false, reason: 'SecretMissing' });
    expect(verdict(out, 'crlf')).toMatchObject({ ok: false, reason: 'SecretInvalid' });
    expect(verdict(out, 'crlf').message).not.toContain('X-Injected');
    for (const name of ['missing', 'nokey', 'crlf'])
      expect(inSnapshot(out.snapshot, 'MCPServer', name)).toBe(false);
    expect(out.verdicts.find((v) => v.ref.kind === 'Project')?.ok).toBe(true);
  });

  it('an unknown project, a name that cannot be a prefix, and two servers with one prefix (older wins)', () => {
    const out = compile(
      withServers(
        server('orphan', { projectRef: { name: 'ghost' } }),
        server('a-very-long-server-name-that-is-over-32', {}),
        server('a-very-long-server-name-that-is-over-33', { toolPrefix: 'long' }),
        server('newer', { toolPrefix: 'tools' }, '2025-03-01T00:00:00Z'),
        server('older', { toolPrefix: 'tools' }, '2025-02-01T00:00:00Z'),
      ),
    );
    expect(verdict(out, 'orphan')).toMatchObject({ ok: false, reason: 'ProjectNotFound' });
    expect(verdict(out, 'a-very-long-server-name-that-is-over-32')).toMatchObject({
      ok: false,
      reason: 'InvalidSpec',
    });
    expect(verdict(out, 'a-very-long-server-name-that-is-over-32').message).toContain('set spec.toolPrefix');
    expect(verdict(out, 'a-very-long-server-name-that-is-over-33').ok).toBe(true);
    expect(verdict(out, 'older').ok).toBe(true);
    expect(verdict(out, 'newer')).toMatchObject({ ok: false, reason: 'DuplicateToolPrefix' });
    expect(verdict(out, 'newer').message).toContain(`${NS}/older`);
    expect(Object.keys(out.snapshot.projects[PROJECT_ID]?.mcpServers ?? {}).sort()).toEqual([
      'a-very-long-server-name-that-is-over-33',
      'older',
    ]);
  });

  it('equal input, equal version; a rotated token changes it', () => {
    const spec = { credentials: { bearer: { secretRef: { name: 'gh-token' } } } };
    const a = compile(withServers(server('github', spec)));
    const b = compile(withServers(server('github', spec)));
    expect(a.snapshot.version).toBe(b.snapshot.version);
    const f = withServers(server('github', spec));
    f.secrets = f.secrets.map((s) => (s.name === 'gh-token' ? { ...s, data: { token: 'rotated' } } : s));
    expect(compile(f).snapshot.version).not.toBe(a.snapshot.version);
  });
});

describe('MCPServer schema (what the CRD and embedded mode refuse)', () => {
  const issues = (spec: Record<string, unknown>) => {
    const r = switchyardObject.safeParse(server('x', spec));
    return r.success ? [] : r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
  };

  it('accepts the minimal spec and applies the defaults', () => {
    const parsed = switchyardObject.parse(server('x', {}));
    expect(parsed.kind === 'MCPServer' && parsed.spec).toMatchObject({
      timeoutMs: 30_000,
      denyTools: [],
      tools: [],
    });
  });

  it.each([
    ['a non-http URL', { url: 'ftp://mcp.example.com' }, 'spec.url'],
    ['a prefix with the separator', { toolPrefix: 'a__b' }, 'spec.toolPrefix'],
    ['a prefix too long', { toolPrefix: 'p'.repeat(33) }, 'spec.toolPrefix'],
    ['a glob with a space', { denyTools: ['rm -rf'] }, 'spec.denyTools.0'],
    ['a price that is not a decimal', { tools: [{ name: 't', priceUsd: '1e3' }] }, 'spec.tools.0.priceUsd'],
    ['a timeout over the cap', { timeoutMs: 600_001 }, 'spec.timeoutMs'],
    [
      'a header the gateway sets itself',
      { credentials: { header: { headerName: 'Mcp-Session-Id', secretRef: { name: 's' } } } },
      'spec.credentials.header.headerName',
    ],
    [
      'bearer and header at once',
      {
        credentials: {
          bearer: { secretRef: { name: 's' } },
          header: { headerName: 'X-Key', secretRef: { name: 's' } },
        },
      },
      'spec.credentials',
    ],
    ['empty credentials', { credentials: {} }, 'spec.credentials'],
  ])('refuses %s', (_title, spec, path) => {
    const found = issues(spec as Record<string, unknown>);
    expect(found.some((i) => i.startsWith(`${path}:`))).toBe(true);
  });
});

describe('ApiKey tool grants', () => {
  it('compile sorted and deduplicated into the key; absent when the key names none', () => {
    const f = baseFixture();
    get(f, 'ApiKey', 'backend').spec.toolGrants = ['search__*', 'github__get_issue', 'search__*'];
    get(f, 'ApiKey', 'backend').spec.scopes = ['ai', 'mcp'];
    const key = compile(f).snapshot.apiKeys[hashApiKey(API_KEY)];
    expect(key).toMatchObject({ scopes: ['ai', 'mcp'], toolGrants: ['github__get_issue', 'search__*'] });
    expect(compile(baseFixture()).snapshot.apiKeys[hashApiKey(API_KEY)]?.toolGrants).toBeUndefined();
  });

  it('refuses a grant that is not a tool name pattern', () => {
    const f = baseFixture();
    get(f, 'ApiKey', 'backend').spec.toolGrants = ['github/*'];
    expect(() => compile(f)).toThrow(/toolGrants/);
  });
});
