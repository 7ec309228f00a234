import { appendFileSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { z } from 'zod';
import {
  API_KEY_SCOPES,
  DEFAULT_WEBHOOK_EVENT_TYPES,
  PROVIDER_TYPES,
  REQUEST_TYPES,
  SPEND_CAP_SCOPES,
  SPEND_PERIODS,
  STRUCTURED_REQUEST_TYPES,
  WEBHOOK_EVENT_TYPES,
} from '#contract';
import { buildAllCrds, buildCrd, CRD_HEADER, renderCrdFiles } from '#operator/crd/build';
import type { CustomResourceDefinition, JSONSchemaProps } from '#operator/crd/crd-types';
import { CRDS_DIR, diffCrds, writeCrds } from '#operator/crd/files';
import { toStructuralSchema } from '#operator/crd/structural-schema';
import { celList, celString, KINDS } from '#operator/resources/index';

const crds = buildAllCrds();
const byKind = (kind: string): CustomResourceDefinition => {
  const crd = crds.find((c) => c.spec.names.kind === kind);
  if (!crd) throw new Error(`no CRD for ${kind}`);
  return crd;
};
const rootSchema = (crd: CustomResourceDefinition): JSONSchemaProps => {
  const version = crd.spec.versions[0];
  if (!version) throw new Error('no version');
  return version.schema.openAPIV3Schema;
};

/** Calls `visit` on every schema node with its path. */
function walk(
  node: JSONSchemaProps,
  path: string,
  visit: (node: JSONSchemaProps, path: string) => void,
): void {
  visit(node, path);
  for (const [name, child] of Object.entries(node.properties ?? {})) walk(child, `${path}.${name}`, visit);
  if (node.items) walk(node.items, `${path}[]`, visit);
  if (node.additionalProperties) walk(node.additionalProperties, `${path}.*`, visit);
}

/** Looks up a dotted path (.a.b, list indexes/filters skipped) below a schema node. */
function lookup(node: JSONSchemaProps, path: string): JSONSchemaProps | undefined {
  let current: JSONSchemaProps | undefined = node;
  for (const part of path
    .replace(/\[[^\]]*\]/g, '[]')
    .split('.')
    .filter(Boolean)) {
    const [name, ...lists] = part.split('[]');
    current = name ? current?.properties?.[name] : current;
    for (let i = 0; i < lists.length; i++) current = current?.items;
  }
  return current;
}

const allRules = (crd: CustomResourceDefinition): { path: string; rule: string; fieldPath?: string }[] => {
  const rules: { path: string; rule: string; fieldPath?: string }[] = [];
  walk(rootSchema(crd), '', (node, path) => {
    for (const r of node['x-kubernetes-validations'] ?? [])
      rules.push({ path, rule: r.rule, ...(r.fieldPath ? { fieldPath: r.fieldPath } : {}) });
  });
  return rules;
};

describe('committed crds/', () => {
  it('match the generator (run `make crds` when this fails)', () => {
    expect(diffCrds()).toEqual([]);
  });

  it('holds one file per kind, named <plural>.switchyard.dev.yaml, with the do-not-edit header', () => {
    const files = renderCrdFiles();
    expect([...files.keys()].sort()).toEqual(KINDS.map((k) => `${k.info.plural}.switchyard.dev.yaml`).sort());
    for (const [file, content] of files) {
      expect(content.startsWith(CRD_HEADER)).toBe(true);
      expect(CRD_HEADER).toContain('make crds');
      expect(parse(readFileSync(join(CRDS_DIR, file), 'utf8'))).toEqual(
        JSON.parse(JSON.stringify(byKindFile(file))),
      );
    }
  });
});

function byKindFile(file: string): CustomResourceDefinition {
  const crd = crds.find((c) => `${c.metadata.name}.yaml` === file);
  if (!crd) throw new Error(file);
  return crd;
}

describe('buildCrd', () => {
  it('is deterministic', () => {
    for (const kind of KINDS) expect(stringify(buildCrd(kind))).toEqual(stringify(buildCrd(kind)));
    expect([...renderCrdFiles().values()]).toEqual([...renderCrdFiles(buildAllCrds()).values()]);
  });

  it('registers every kind as switchyard.dev/v1alpha1, namespaced, with a status subresource', () => {
    for (const { info } of KINDS) {
      const crd = byKind(info.kind);
      expect(crd.apiVersion).toBe('apiextensions.k8s.io/v1');
      expect(crd.metadata.name).toBe(`${info.plural}.switchyard.dev`);
      expect(crd.spec.group).toBe('switchyard.dev');
      expect(crd.spec.scope).toBe('Namespaced');
      expect(crd.spec.names).toEqual({
        kind: info.kind,
        listKind: `${info.kind}List`,
        plural: info.plural,
        singular: info.singular,
        shortNames: info.shortNames,
        categories: info.categories,
      });
      expect(crd.spec.versions).toHaveLength(1);
      const [version] = crd.spec.versions;
      expect(version).toMatchObject({
        name: 'v1alpha1',
        served: true,
        storage: true,
        subresources: { status: {} },
      });
      const root = rootSchema(crd);
      expect(root.type).toBe('object');
      expect(root.description).toBe(info.description);
      expect(Object.keys(root.properties ?? {})).toEqual([
        'apiVersion',
        'kind',
        'metadata',
        'spec',
        'status',
      ]);
      // The API server rejects anything but `type: object` on the root metadata.
      expect(root.properties?.['metadata']).toEqual({ type: 'object' });
    }
  });

  it('requires spec except for Project, whose spec defaults', () => {
    for (const { info } of KINDS) {
      const root = rootSchema(byKind(info.kind));
      if (info.kind === 'Project') {
        expect(root.required).toBeUndefined();
        expect(root.properties?.['spec']?.default).toEqual({
          compatibleApi: { enabled: true },
          requestLogs: { bodies: false, maxEntries: 100_000 },
          storedResponses: { retentionDays: 30 },
        });
      } else expect(root.required).toEqual(['spec']);
    }
  });

  it('gives every property at every depth a description', () => {
    const missing: string[] = [];
    for (const crd of crds)
      walk(rootSchema(crd), crd.spec.names.kind, (node, path) => {
        if (path === `${crd.spec.names.kind}.metadata`) return;
        if (!node.description?.trim()) missing.push(path);
      });
    expect(missing).toEqual([]);
  });

  it('emits structural schemas only', () => {
    const problems: string[] = [];
    for (const crd of crds)
      walk(rootSchema(crd), crd.spec.names.kind, (node, path) => {
        const loose = node['x-kubernetes-preserve-unknown-fields'] || node['x-kubernetes-int-or-string'];
        if (!node.type && !loose) problems.push(`${path}: no type`);
        const raw = node as Record<string, unknown>;
        for (const key of [
          'anyOf',
          'oneOf',
          'allOf',
          'not',
          '$ref',
          '$schema',
          'id',
          'uniqueItems',
          'propertyNames',
          'const',
        ])
          if (key in raw) problems.push(`${path}: ${key}`);
        if ('additionalProperties' in raw && typeof raw['additionalProperties'] !== 'object')
          problems.push(`${path}: additionalProperties is not a schema`);
        if (node.properties && node.additionalProperties)
          problems.push(`${path}: properties and additionalProperties`);
        if (node.items && node.type !== 'array') problems.push(`${path}: items on ${node.type}`);
        if (node.properties && node.type !== 'object') problems.push(`${path}: properties on ${node.type}`);
        for (const bound of [node.minimum, node.maximum])
          if (bound !== undefined && Math.abs(bound) >= Number.MAX_SAFE_INTEGER)
            problems.push(`${path}: zod int noise`);
        if (
          node.format &&
          !['date-time', 'date', 'duration', 'uri', 'email', 'uuid', 'byte', 'int32', 'int64'].includes(
            node.format,
          )
        )
          problems.push(`${path}: format ${node.format}`);
        if (node['x-kubernetes-list-type'] === 'map') {
          for (const key of node['x-kubernetes-list-map-keys'] ?? [])
            if (!node.items?.required?.includes(key) && node.items?.properties?.[key]?.default === undefined)
              problems.push(`${path}: list map key ${key} is neither required nor defaulted`);
        }
        if (node['x-kubernetes-list-type'] === 'set' && node.items?.type === 'object')
          problems.push(`${path}: set of objects`);
      });
    expect(problems).toEqual([]);
  });

  it('keeps the bounds CEL cost estimation depends on', () => {
    const wf = rootSchema(byKind('Workflow')).properties?.['spec'];
    expect(wf?.properties?.['systemInstructions']?.maxLength).toBe(100_000);
    expect(wf?.properties?.['backups']?.maxItems).toBe(10);
    expect(wf?.properties?.['cacheFields']?.items?.maxLength).toBe(256);
    const provider = rootSchema(byKind('Provider')).properties?.['spec'];
    expect(provider?.properties?.['baseURL']?.maxLength).toBe(2048);
    expect(provider?.properties?.['models']?.maxItems).toBe(500);
    expect(provider?.properties?.['models']?.items?.properties?.['name']?.maxLength).toBe(200);
    expect(rootSchema(byKind('SpendCap')).properties?.['spec']?.properties?.['limitUsd']?.maxLength).toBe(24);
    expect(rootSchema(byKind('Project')).properties?.['status']?.properties?.['conditions']?.maxItems).toBe(
      16,
    );
  });

  it('takes every enum of a shared vocabulary from the contract, in its order', () => {
    const spec = (kind: string) => rootSchema(byKind(kind)).properties?.['spec'] ?? {};
    const enums: [string, unknown[] | undefined, readonly string[]][] = [
      ['Provider type', lookup(spec('Provider'), '.type')?.enum, PROVIDER_TYPES],
      [
        'Provider model requestTypes',
        lookup(spec('Provider'), '.models[].requestTypes[]')?.enum,
        REQUEST_TYPES,
      ],
      ['Workflow requestType', lookup(spec('Workflow'), '.requestType')?.enum, REQUEST_TYPES],
      ['ApiKey scopes', lookup(spec('ApiKey'), '.scopes[]')?.enum, API_KEY_SCOPES],
      ['SpendCap period', lookup(spec('SpendCap'), '.period')?.enum, SPEND_PERIODS],
      ['SpendCap scope', lookup(spec('SpendCap'), '.scope')?.enum, SPEND_CAP_SCOPES],
      ['Project webhook events', lookup(spec('Project'), '.webhooks[].events[]')?.enum, WEBHOOK_EVENT_TYPES],
    ];
    for (const [what, actual, expected] of enums) expect(actual, what).toEqual([...expected]);
    expect(WEBHOOK_EVENT_TYPES).toEqual([
      'ai.response',
      'ai.error',
      'task.ai_generated',
      'task.completed',
      'callback.timeout',
      'budget.threshold',
    ]);
    expect(lookup(spec('Project'), '.webhooks[].events')).toMatchObject({
      default: [...DEFAULT_WEBHOOK_EVENT_TYPES],
      maxItems: WEBHOOK_EVENT_TYPES.length,
    });
    expect(lookup(spec('ApiKey'), '.scopes')?.maxItems).toBe(API_KEY_SCOPES.length);
    expect(lookup(spec('Provider'), '.models[].requestTypes')?.maxItems).toBe(REQUEST_TYPES.length);
  });

  it('builds CEL lists from the vocabulary, quoting as CEL reads it', () => {
    expect(celList(STRUCTURED_REQUEST_TYPES)).toBe("['chat', 'completion', 'vision']");
    expect(celString("it's")).toBe("'it\\'s'");
    expect(celString('a\\b"c')).toBe("'a\\\\b\\\"c'");
    expect(celList([])).toBe('[]');
  });

  it('declares Project requestLogs with defaults and bounds, described for kubectl explain', () => {
    const logs = lookup(rootSchema(byKind('Project')), '.spec.requestLogs');
    expect(logs?.type).toBe('object');
    expect(logs?.default).toEqual({ bodies: false, maxEntries: 100_000 });
    expect(logs?.description).toMatch(/request-log/i);
    expect(logs?.properties?.['bodies']).toMatchObject({ type: 'boolean', default: false });
    expect(logs?.properties?.['bodies']?.description).toMatch(/bodies/);
    expect(logs?.properties?.['maxEntries']).toMatchObject({
      type: 'integer',
      default: 100_000,
      minimum: 1_000,
      maximum: 10_000_000,
    });
    expect(logs?.properties?.['maxEntries']?.description).toMatch(/trimmed/);
    expect(logs?.required).toBeUndefined();
  });

  it('carries the CEL rules from the zod metadata, with field paths that exist', () => {
    const spendCap = allRules(byKind('SpendCap'));
    expect(spendCap).toContainEqual({
      path: '.spec',
      rule: "self.scope == 'workflow' ? (has(self.workflowRef) && has(self.slot)) : true",
      fieldPath: '.workflowRef',
    });
    expect(allRules(byKind('Provider')).map((r) => r.rule)).toEqual(
      expect.arrayContaining([
        "self.type in ['openai', 'anthropic', 'gemini', 'bedrock', 'vertex-ai', 'cohere'] || has(self.baseURL)",
        "self.type in ['openai-compatible'] || has(self.credentials)",
      ]),
    );
    expect(allRules(byKind('Workflow')).map((r) => r.rule)).toContain(
      "!has(self.structuredOutput) || self.requestType in ['chat', 'completion', 'vision']",
    );
    for (const crd of crds)
      for (const r of allRules(crd)) {
        const at = lookup(rootSchema(crd), r.path);
        if (r.fieldPath)
          expect(at && lookup(at, r.fieldPath), `${crd.spec.names.kind} ${r.fieldPath}`).toBeDefined();
      }
  });

  it('prints the expected columns, each pointing at a schema field', () => {
    const names = (kind: string) =>
      byKind(kind).spec.versions[0]?.additionalPrinterColumns.map((c) => c.name) ?? [];
    expect(names('Workflow')).toEqual(
      expect.arrayContaining(['Project', 'Provider', 'Model', 'Backups', 'Ready']),
    );
    expect(names('SpendCap')).toEqual(expect.arrayContaining(['Period', 'Limit', 'Spent', 'State']));
    for (const crd of crds)
      for (const column of crd.spec.versions[0]?.additionalPrinterColumns ?? []) {
        if (column.jsonPath.startsWith('.metadata.')) continue;
        expect(
          lookup(rootSchema(crd), column.jsonPath),
          `${crd.spec.names.kind} ${column.jsonPath}`,
        ).toBeDefined();
      }
  });
});

describe('toStructuralSchema', () => {
  it('drops zod integer noise, keeps real bounds', () => {
    expect(toStructuralSchema(z.number().int())).toEqual({ type: 'integer' });
    expect(toStructuralSchema(z.number().int().min(0).max(5))).toEqual({
      type: 'integer',
      minimum: 0,
      maximum: 5,
    });
  });

  it('turns nullable unions into nullable types and enum unions into one enum', () => {
    expect(toStructuralSchema(z.string().max(3).nullable())).toEqual({
      type: 'string',
      nullable: true,
      maxLength: 3,
    });
    expect(toStructuralSchema(z.union([z.literal('a'), z.literal('b')]))).toEqual({
      type: 'string',
      enum: ['a', 'b'],
    });
  });

  it('maps records to additionalProperties and free-form values to preserve-unknown-fields', () => {
    expect(toStructuralSchema(z.record(z.string(), z.string().max(9)))).toEqual({
      type: 'object',
      additionalProperties: { type: 'string', maxLength: 9 },
    });
    expect(toStructuralSchema(z.record(z.string(), z.unknown()))).toEqual({
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
    });
    expect(toStructuralSchema(z.unknown())).toEqual({ 'x-kubernetes-preserve-unknown-fields': true });
    expect(toStructuralSchema(z.looseObject({ a: z.string() }))).toMatchObject({
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
    });
    expect(toStructuralSchema(z.strictObject({ a: z.string() }))).toEqual({
      type: 'object',
      properties: { a: { type: 'string' } },
      required: ['a'],
    });
  });

  it('drops formats the API server does not know and keeps the ones it does', () => {
    expect(toStructuralSchema(z.base64()).format).toBeUndefined();
    expect(toStructuralSchema(z.iso.datetime()).format).toBe('date-time');
  });

  it('refuses unions that have no structural equivalent', () => {
    expect(() => toStructuralSchema(z.object({ x: z.union([z.string(), z.number()]) }))).toThrow(/x: anyOf/);
  });
});

describe('drift check', () => {
  const dirs: string[] = [];
  const freshDir = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'switchyard-crds-'));
    dirs.push(dir);
    writeCrds(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('passes on freshly written files', () => {
    expect(diffCrds(freshDir())).toEqual([]);
  });

  it('detects a mutated CRD', () => {
    const dir = freshDir();
    const mutated = buildAllCrds().map((crd) => structuredClone(crd));
    const workflow = mutated.find((c) => c.spec.names.kind === 'Workflow');
    const spec = workflow && rootSchema(workflow).properties?.['spec'];
    if (!spec?.properties?.['model']) throw new Error('unexpected schema');
    spec.properties['model'].maxLength = 999;
    writeFileSync(
      join(dir, 'workflows.switchyard.dev.yaml'),
      renderCrdFiles(mutated).get('workflows.switchyard.dev.yaml') ?? '',
    );
    const drift = diffCrds(dir);
    expect(drift).toHaveLength(1);
    expect(drift[0]).toMatchObject({ file: 'workflows.switchyard.dev.yaml', problem: 'differs' });
    expect(drift[0]?.detail).toContain('maxLength: 200');
  });

  it('detects hand edits, missing and extra files, and --write repairs them', () => {
    const dir = freshDir();
    appendFileSync(join(dir, 'projects.switchyard.dev.yaml'), '# hand edit\n');
    unlinkSync(join(dir, 'apikeys.switchyard.dev.yaml'));
    writeFileSync(join(dir, 'legacy.switchyard.dev.yaml'), 'kind: CustomResourceDefinition\n');
    expect(diffCrds(dir).map((d) => `${d.file}:${d.problem}`)).toEqual([
      'projects.switchyard.dev.yaml:differs',
      'apikeys.switchyard.dev.yaml:missing',
      'legacy.switchyard.dev.yaml:extra',
    ]);
    writeCrds(dir);
    expect(diffCrds(dir)).toEqual([]);
  });
});
