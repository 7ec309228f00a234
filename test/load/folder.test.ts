import { cp, mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { compileSnapshot } from '#operator/compiler/index';
import { formatProblem, type LoadedConfig, type LoadProblem, loadConfigFolder } from '#operator/load/folder';

const EXAMPLES = resolve(import.meta.dirname, '../../examples');
const temps: string[] = [];

afterAll(async () => {
  await Promise.all(temps.map((d) => rm(d, { recursive: true, force: true })));
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-load-'));
  temps.push(dir);
  return dir;
}

/** Writes `files` (path relative to the folder → content) into a fresh temp folder. */
async function folder(files: Record<string, string>): Promise<string> {
  const dir = await tempDir();
  for (const [path, text] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true });
    await writeFile(join(dir, path), text);
  }
  return dir;
}

const PROJECT = `apiVersion: switchyard.dev/v1alpha1
kind: Project
metadata:
  name: shop
  namespace: acme
`;

const PROVIDER = `apiVersion: switchyard.dev/v1alpha1
kind: Provider
metadata:
  name: openai
  namespace: acme
spec:
  type: openai
  credentials:
    secretRef:
      name: openai-creds
  models:
    - name: gpt-4o-mini
`;

const workflow = (requestType: string) => `apiVersion: switchyard.dev/v1alpha1
kind: Workflow
metadata:
  name: support
  namespace: acme
spec:
  projectRef:
    name: shop
  requestType: ${requestType}
  provider: openai
  model: gpt-4o-mini
`;

interface ExpectedProblem {
  file: string;
  object?: string;
  field?: string;
  messageContains: string;
}

interface Case {
  title: string;
  files: Record<string, string>;
  objects: string[];
  secrets?: string[];
  problems: ExpectedProblem[];
}

const cases: Case[] = [
  {
    title: 'a file that is not valid YAML; the other files still load',
    files: {
      'a-project.yaml': PROJECT,
      'b-broken.yaml': 'kind: [unclosed\nmetadata: {name: x}\n',
      'c-provider.yml': PROVIDER,
    },
    objects: ['Project acme/shop', 'Provider acme/openai'],
    problems: [{ file: 'b-broken.yaml', object: 'document #1', messageContains: 'invalid YAML' }],
  },
  {
    title: 'duplicate keys in a mapping are invalid YAML',
    files: { 'dup.yaml': `${PROJECT}metadata:\n  name: again\n` },
    objects: [],
    problems: [{ file: 'dup.yaml', messageContains: 'invalid YAML: Map keys must be unique' }],
  },
  {
    title: 'an unknown Switchyard kind',
    files: {
      'gadget.yaml':
        'apiVersion: switchyard.dev/v1alpha1\nkind: Gadget\nmetadata:\n  name: g\n  namespace: acme\n',
    },
    objects: [],
    problems: [{ file: 'gadget.yaml', object: 'Gadget acme/g', field: 'kind', messageContains: '' }],
  },
  {
    title: 'a foreign kind',
    files: {
      'deploy.yaml': 'apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: acme\n',
      'cm.yaml': 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n',
    },
    objects: [],
    problems: [
      {
        file: 'cm.yaml',
        object: 'ConfigMap settings',
        field: 'apiVersion',
        messageContains: 'unknown kind v1/ConfigMap',
      },
      {
        file: 'deploy.yaml',
        object: 'Deployment acme/web',
        field: 'apiVersion',
        messageContains: 'unknown kind apps/v1/Deployment',
      },
    ],
  },
  {
    title: 'an object failing its schema',
    files: { 'wf.yaml': workflow('telepathy') },
    objects: [],
    problems: [
      { file: 'wf.yaml', object: 'Workflow acme/support', field: 'spec.requestType', messageContains: '' },
    ],
  },
  {
    title: 'a field path into an array',
    files: {
      'provider.yaml': PROVIDER.replace(
        '    - name: gpt-4o-mini\n',
        '    - name: gpt-4o-mini\n      requestTypes: [chat, smell]\n',
      ),
    },
    objects: [],
    problems: [
      {
        file: 'provider.yaml',
        object: 'Provider acme/openai',
        field: 'spec.models[0].requestTypes[1]',
        messageContains: '',
      },
    ],
  },
  {
    title: 'an azure-openai Provider without baseURL (mirror of the CEL rule)',
    files: { 'azure.yaml': PROVIDER.replace('type: openai', 'type: azure-openai') },
    objects: [],
    problems: [
      {
        file: 'azure.yaml',
        object: 'Provider acme/openai',
        field: 'spec.baseURL',
        messageContains: 'baseURL is required for azure-openai and openai-compatible providers',
      },
    ],
  },
  {
    title: 'an azure-openai Provider with baseURL',
    files: {
      'azure.yaml': PROVIDER.replace(
        'type: openai',
        'type: azure-openai\n  baseURL: https://acme.openai.azure.com',
      ),
    },
    objects: ['Provider acme/openai'],
    problems: [],
  },
  {
    title: 'a workflow-scope SpendCap without slot',
    files: {
      'cap.yaml': `apiVersion: switchyard.dev/v1alpha1
kind: SpendCap
metadata:
  name: cap
  namespace: acme
spec:
  projectRef: {name: shop}
  scope: workflow
  workflowRef: {name: support}
  period: daily
  limitUsd: "5"
`,
    },
    objects: [],
    problems: [
      {
        file: 'cap.yaml',
        object: 'SpendCap acme/cap',
        field: 'spec.workflowRef',
        messageContains: 'needs workflowRef and slot',
      },
    ],
  },
  {
    title: 'a Secret with invalid base64 data',
    files: {
      'secret.yaml':
        'apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\n  namespace: acme\ndata:\n  apiKey: "not base64!"\n',
    },
    objects: [],
    problems: [
      {
        file: 'secret.yaml',
        object: 'Secret acme/creds',
        field: 'data.apiKey',
        messageContains: 'must be base64',
      },
    ],
  },
  {
    title: 'a multi-document file with one document failing its schema',
    files: { 'all.yaml': `${PROJECT}---\n${workflow('telepathy')}---\n${PROVIDER}` },
    objects: ['Project acme/shop', 'Provider acme/openai'],
    problems: [
      { file: 'all.yaml', object: 'Workflow acme/support', field: 'spec.requestType', messageContains: '' },
    ],
  },
  {
    title: 'a multi-document file with one document that is not valid YAML',
    files: { 'all.yaml': `${PROJECT}---\nkind: [unclosed\nmetadata: {}\n---\n${PROVIDER}` },
    objects: ['Project acme/shop', 'Provider acme/openai'],
    problems: [{ file: 'all.yaml', object: 'document #2', messageContains: 'invalid YAML' }],
  },
  {
    title: 'a document that is not a mapping',
    files: { 'list.yaml': '- apiVersion: v1\n- kind: Secret\n', 'scalar.yaml': 'just text\n' },
    objects: [],
    problems: [
      { file: 'list.yaml', object: 'document #1', messageContains: 'must be a mapping' },
      { file: 'scalar.yaml', object: 'document #1', messageContains: 'must be a mapping' },
    ],
  },
  {
    title: 'the same object defined twice: the first definition counts, the repeat is reported',
    files: {
      'a.yaml': workflow('chat'),
      // Namespace defaulted vs written out: still the same object.
      'b/again.yaml': `${workflow('embedding')}---\n${PROJECT}`,
      'c.yaml':
        'apiVersion: v1\nkind: Secret\nmetadata: {name: s}\nstringData: {a: "1"}\n---\napiVersion: v1\nkind: Secret\nmetadata: {name: s, namespace: default}\nstringData: {a: "2"}\n',
    },
    objects: ['Project acme/shop', 'Workflow acme/support'],
    secrets: ['default/s'],
    problems: [
      {
        file: 'b/again.yaml',
        object: 'Workflow acme/support',
        messageContains: 'Workflow acme/support is already defined in',
      },
      {
        file: 'c.yaml',
        object: 'Secret default/s',
        messageContains: 'Secret default/s is already defined in',
      },
    ],
  },
  {
    title: 'the same name in two namespaces or as two kinds is not a repeat',
    files: {
      'a.yaml': PROJECT,
      'b.yaml': PROJECT.replace('namespace: acme', 'namespace: beta'),
      'c.yaml': workflow('chat').replace('name: support', 'name: shop'),
    },
    objects: ['Project acme/shop', 'Project beta/shop', 'Workflow acme/shop'],
    problems: [],
  },
  {
    title: 'JSON files',
    files: {
      'project.json': JSON.stringify({
        apiVersion: 'switchyard.dev/v1alpha1',
        kind: 'Project',
        metadata: { name: 'shop', namespace: 'acme' },
      }),
      'secret.json': JSON.stringify({
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'openai-creds', namespace: 'acme' },
        data: { apiKey: Buffer.from('sk-json').toString('base64') },
      }),
      'broken.json': '{"apiVersion": "v1", ',
    },
    objects: ['Project acme/shop'],
    secrets: ['acme/openai-creds'],
    problems: [{ file: 'broken.json', messageContains: 'invalid YAML' }],
  },
  {
    title: 'nested folders, other file types, comments and empty documents',
    files: {
      'README.md': '# not a manifest',
      'notes.txt': 'kind: [',
      'empty.yaml': '',
      'comments.yaml': '# nothing here\n---\n---\n',
      'nested/deeper/project.yaml': `---\n${PROJECT}---\n`,
    },
    objects: ['Project acme/shop'],
    problems: [],
  },
];

const names = (c: LoadedConfig) =>
  c.objects.map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`).sort();

describe('loadConfigFolder', () => {
  it.each(cases)('$title', async ({ files, objects, secrets = [], problems }) => {
    const dir = await folder(files);
    const loaded = await loadConfigFolder(dir);
    expect(names(loaded)).toEqual([...objects].sort());
    expect(loaded.secrets.map((s) => `${s.namespace}/${s.name}`)).toEqual(secrets);
    const got = [...loaded.problems].sort((a, b) => a.file.localeCompare(b.file));
    expect(got).toHaveLength(problems.length);
    problems.forEach((want, i) => {
      const p = got[i] as LoadProblem;
      // The file is named so it can be found from the working directory.
      expect(resolve(p.file)).toBe(join(dir, want.file));
      if (want.object !== undefined) expect(p.object).toBe(want.object);
      if (want.field !== undefined) expect(p.field).toBe(want.field);
      expect(p.message).toContain(want.messageContains);
      expect(formatProblem(p)).toContain(want.file);
    });
  });

  it('loads every object and Secret of examples/, with no problems, and they compile cleanly', async () => {
    const dir = await tempDir();
    await cp(EXAMPLES, dir, { recursive: true });
    // What a plain YAML parse of the folder finds, so the test follows the examples as they grow.
    const files = (await readdir(EXAMPLES)).filter((f) => f.endsWith('.yaml'));
    const docs: { kind: string; metadata: { namespace?: string; name: string }; spec?: { name?: string } }[] =
      [];
    for (const f of files)
      for (const d of parseAllDocuments(await readFile(join(EXAMPLES, f), 'utf8'))) {
        const v = d.toJS() as (typeof docs)[number] | null;
        if (v) docs.push(v);
      }
    const kinds = (want: (k: string) => boolean) =>
      docs
        .filter((d) => want(d.kind))
        .map((d) => d.kind)
        .sort();
    const loaded = await loadConfigFolder(dir);
    expect(loaded.problems).toEqual([]);
    expect(loaded.files).toBe(files.length);
    expect(loaded.objects.map((o) => o.kind).sort()).toEqual(
      kinds((k) => k !== 'Secret' && k !== 'Namespace'),
    );
    expect(loaded.secrets).toHaveLength(kinds((k) => k === 'Secret').length);
    expect(loaded.objects.length).toBeGreaterThanOrEqual(9);
    const { snapshot, verdicts } = compileSnapshot({
      objects: loaded.objects,
      secrets: loaded.secrets,
      now: new Date('2025-06-01T00:00:00Z'),
      sealKey: Buffer.alloc(32, 3),
    });
    expect(verdicts.filter((v) => !v.ok)).toEqual([]);
    const storefront = docs
      .filter((d) => d.kind === 'Workflow' && d.metadata.namespace === 'acme')
      .map((d) => d.spec?.name ?? d.metadata.name)
      .sort();
    const compiled = Object.values(snapshot.projects)
      .flatMap((p) => Object.keys(p.workflows))
      .sort();
    expect(compiled).toEqual(storefront);
    expect(compiled).toEqual(
      expect.arrayContaining(['invoice-extract', 'product-embeddings', 'support-chat']),
    );
  });

  it('reports a missing folder as a problem instead of throwing', async () => {
    const dir = join(await tempDir(), 'does-not-exist');
    const loaded = await loadConfigFolder(dir);
    expect(loaded.objects).toEqual([]);
    expect(loaded.secrets).toEqual([]);
    expect(loaded.files).toBe(0);
    expect(loaded.problems).toHaveLength(1);
    expect(loaded.problems[0]?.file).toBe(dir);
    expect(loaded.problems[0]?.message).toContain('cannot read config folder');
  });

  it('decodes Secrets: base64 data, stringData merged over it, namespace defaulted', async () => {
    const dir = await folder({
      'secret.yaml': `apiVersion: v1
kind: Secret
metadata:
  name: creds
data:
  apiKey: ${Buffer.from('from-data').toString('base64')}
  other: ${Buffer.from('kept').toString('base64')}
stringData:
  apiKey: from-stringData
`,
    });
    const loaded = await loadConfigFolder(dir);
    expect(loaded.problems).toEqual([]);
    expect(loaded.secrets).toEqual([
      { namespace: 'default', name: 'creds', data: { apiKey: 'from-stringData', other: 'kept' } },
    ]);
  });

  it('stamps generation and creationTimestamp (from the file time) unless the manifest sets them', async () => {
    const dir = await folder({
      'a.yaml': PROJECT,
      'b.yaml': PROJECT.replace('name: shop', 'name: blog').concat(
        '  creationTimestamp: "2024-01-01T00:00:00Z"\n  generation: 4\n',
      ),
    });
    const mtime = new Date('2025-03-04T05:06:07.000Z');
    await utimes(join(dir, 'a.yaml'), mtime, mtime);
    const loaded = await loadConfigFolder(dir);
    const byName = new Map(loaded.objects.map((o) => [o.metadata.name, o.metadata]));
    expect(byName.get('shop')).toMatchObject({ generation: 1, creationTimestamp: mtime.toISOString() });
    expect(byName.get('blog')).toMatchObject({ generation: 4, creationTimestamp: '2024-01-01T00:00:00Z' });
  });

  it('applies schema defaults', async () => {
    const loaded = await loadConfigFolder(await folder({ 'wf.yaml': workflow('chat'), 'p.yaml': PROVIDER }));
    expect(loaded.problems).toEqual([]);
    const wf = loaded.objects.find((o) => o.kind === 'Workflow');
    const provider = loaded.objects.find((o) => o.kind === 'Provider');
    expect(wf?.kind === 'Workflow' && wf.spec.testMode).toBe(false);
    expect(provider?.kind === 'Provider' && provider.spec.credentials?.secretRef?.key).toBe('apiKey');
    expect(provider?.kind === 'Provider' && provider.spec.models[0]?.requestTypes).toEqual(['chat']);
  });
});
