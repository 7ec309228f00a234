import { stringify } from 'yaml';
import { z } from 'zod';
import { type CelRule, GROUP, KINDS, type KindInfo, VERSION } from '../resources/index.ts';

/**
 * Builds the apiextensions.k8s.io/v1 CustomResourceDefinitions of the Switchyard kinds from the zod
 * schemas in operator/src/resources, which stay the single source of truth. zod's JSON Schema
 * (OpenAPI 3.0 flavour) is rewritten into a Kubernetes *structural* schema: every node has a type
 * (or preserves unknown fields), no anyOf/oneOf/allOf/$ref, no additionalProperties next to
 * properties, no zod safe-integer noise, and keys in a fixed order so the YAML is deterministic.
 * Anything the API server could not take is a thrown error naming the schema path, never silently
 * dropped.
 */

export type SchemaType = 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';

/** The subset of apiextensions.k8s.io/v1 JSONSchemaProps the generator emits. */
export interface JSONSchemaProps {
  description?: string;
  title?: string;
  type?: SchemaType;
  format?: string;
  nullable?: boolean;
  enum?: unknown[];
  default?: unknown;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  exclusiveMinimum?: boolean;
  maximum?: number;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  required?: string[];
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps;
  items?: JSONSchemaProps;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  'x-kubernetes-validations'?: CelRule[];
}

export interface PrinterColumn {
  name: string;
  type: KindInfo['printerColumns'][number]['type'];
  jsonPath: string;
  description: string;
  priority?: number;
}

export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels: Record<string, string> };
  spec: {
    group: string;
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames: string[];
      categories: string[];
    };
    scope: 'Namespaced';
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      subresources: { status: Record<string, never> };
      additionalPrinterColumns: PrinterColumn[];
      schema: { openAPIV3Schema: JSONSchemaProps };
    }[];
  };
}

/** One kind as listed in KINDS. */
export interface KindEntry {
  info: KindInfo;
  schema: z.ZodType;
  spec: z.ZodType;
  status: z.ZodType;
}

export const CRD_HEADER =
  '# Generated from operator/src/resources by `make crds`; do not edit.\n' +
  '# `make check` (operator/src/crd/generate.ts --check) fails when this file drifts from the zod schemas.\n';

/** Formats the API server validates (k8s.io/kube-openapi strfmt plus the apiextensions extras). */
const KNOWN_FORMATS = new Set([
  'bsonobjectid',
  'uri',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'cidr',
  'mac',
  'uuid',
  'uuid3',
  'uuid4',
  'uuid5',
  'isbn',
  'isbn10',
  'isbn13',
  'creditcard',
  'ssn',
  'hexcolor',
  'rgbcolor',
  'byte',
  'password',
  'date',
  'duration',
  'datetime',
  'date-time',
  'int32',
  'int64',
  'float',
  'double',
]);

/** zod bounds every z.int() with ±Number.MAX_SAFE_INTEGER; that is noise in a CRD. */
const SAFE_INT = Number.MAX_SAFE_INTEGER;

/** Output key order of a schema node; properties keep their declaration order. */
const KEY_ORDER = [
  'description',
  'title',
  'type',
  'format',
  'nullable',
  'enum',
  'default',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'exclusiveMinimum',
  'maximum',
  'exclusiveMaximum',
  'multipleOf',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'properties',
  'additionalProperties',
  'items',
  'required',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
] as const satisfies readonly (keyof JSONSchemaProps)[];

/** Keywords copied as they are (after a shape check). */
const SCALAR_KEYS = new Set<string>([
  'description',
  'title',
  'pattern',
  'minLength',
  'maxLength',
  'multipleOf',
  'minItems',
  'maxItems',
  'minProperties',
  'maxProperties',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string',
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-list-type',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
]);
/** Keywords zod emits that a CRD has no use for. */
const DROPPED_KEYS = new Set([
  '$schema',
  'id',
  '$id',
  'examples',
  'example',
  '$comment',
  'readOnly',
  'writeOnly',
  'contentEncoding',
  'contentMediaType',
]);

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const fail = (path: string, message: string): never => {
  throw new Error(`CRD schema ${path || '<root>'}: ${message}`);
};

/** Resolves a local $ref (#/definitions/x, #/$defs/x, #/components/schemas/x) against the root document. */
function resolveRef(root: Json, ref: string, path: string): Json {
  if (!ref.startsWith('#/')) return fail(path, `unsupported $ref ${ref}`);
  let node: unknown = root;
  for (const part of ref.slice(2).split('/')) {
    const key = part.replace(/~1/g, '/').replace(/~0/g, '~');
    node = isObject(node) ? node[key] : undefined;
  }
  return isObject(node) ? node : fail(path, `unresolved $ref ${ref}`);
}

const isNullSchema = (s: Json): boolean =>
  s['type'] === 'null' || (Array.isArray(s['enum']) && s['enum'].length === 1 && s['enum'][0] === null);

/**
 * Flattens anyOf/oneOf/allOf/$ref into a single node: a union with null becomes `nullable`, a
 * union of enums becomes one enum, a one-element allOf is merged. Keys on the outer node (zod puts
 * description and default there) win over the inner one.
 */
function flatten(root: Json, node: Json, path: string, seen: Set<string> = new Set()): Json {
  let out: Json = { ...node };
  if (typeof out['$ref'] === 'string') {
    const ref = out['$ref'];
    if (seen.has(ref)) fail(path, `recursive $ref ${ref} cannot be expressed in a structural schema`);
    const { $ref: _ignored, ...rest } = out;
    out = { ...flatten(root, resolveRef(root, ref, path), path, new Set([...seen, ref])), ...rest };
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    const variants = out[key];
    if (variants === undefined) continue;
    if (!Array.isArray(variants) || !variants.every(isObject))
      return fail(path, `${key} must be a list of schemas`);
    const { [key]: _ignored, ...rest } = out;
    const flat = variants.map((v) => flatten(root, v, path, seen));
    const nonNull = flat.filter((v) => !isNullSchema(v));
    let merged: Json;
    if (nonNull.length === 1 && nonNull[0]) merged = nonNull[0];
    else if (
      nonNull.length > 1 &&
      nonNull.every((v) => Array.isArray(v['enum']) && v['type'] === nonNull[0]?.['type'])
    )
      merged = { type: nonNull[0]?.['type'], enum: nonNull.flatMap((v) => v['enum'] as unknown[]) };
    else
      return fail(
        path,
        `${key} with ${nonNull.length} alternatives has no structural equivalent; use one object type (with a CEL rule) instead`,
      );
    out = { ...merged, ...rest };
    if (nonNull.length < flat.length) out['nullable'] = true;
  }
  if (out['allOf'] !== undefined) {
    const parts = out['allOf'];
    if (!Array.isArray(parts) || parts.length !== 1 || !isObject(parts[0]))
      return fail(path, 'allOf with more than one schema has no structural equivalent');
    const { allOf: _ignored, ...rest } = out;
    out = { ...flatten(root, parts[0], path, seen), ...rest };
  }
  return out;
}

function orderKeys(node: JSONSchemaProps): JSONSchemaProps {
  const out: Record<string, unknown> = {};
  for (const key of KEY_ORDER) if (node[key] !== undefined) out[key] = node[key];
  return out as JSONSchemaProps;
}

const SCHEMA_TYPES = new Set<string>(['object', 'array', 'string', 'integer', 'number', 'boolean']);

/** Converts one zod JSON Schema node (and its children) into a structural schema node. */
function convert(root: Json, input: Json, path: string): JSONSchemaProps {
  const node = flatten(root, input, path);
  const out: JSONSchemaProps = {};
  const extra = out as Record<string, unknown>;
  for (const [key, value] of Object.entries(node)) {
    if (value === undefined || DROPPED_KEYS.has(key) || key === 'properties' || key === 'required') continue;
    if (key.startsWith('$')) {
      if (key === '$defs' || key === 'definitions') continue;
      fail(path, `unsupported keyword ${key}`);
    }
    if (SCALAR_KEYS.has(key)) {
      extra[key] = structuredClone(value);
      continue;
    }
    switch (key) {
      case 'type':
        if (typeof value !== 'string' || !SCHEMA_TYPES.has(value))
          fail(path, `unsupported type ${JSON.stringify(value)}`);
        out.type = value as SchemaType;
        break;
      case 'nullable':
        if (value === true) out.nullable = true;
        break;
      case 'format':
        // Unknown formats are rejected or ignored depending on the server version; zod always
        // emits a pattern next to its own formats, so dropping them loses nothing.
        if (typeof value === 'string' && KNOWN_FORMATS.has(value)) out.format = value;
        break;
      case 'const':
        out.enum = [structuredClone(value)];
        break;
      case 'enum':
        if (!Array.isArray(value)) fail(path, 'enum must be a list');
        out.enum = structuredClone(value as unknown[]).filter((v) => v !== null);
        if ((value as unknown[]).includes(null)) out.nullable = true;
        break;
      case 'default':
        out.default = structuredClone(value);
        break;
      case 'minimum':
      case 'maximum':
        if (typeof value !== 'number') fail(path, `${key} must be a number`);
        if (Math.abs(value as number) !== SAFE_INT) out[key] = value as number;
        break;
      case 'exclusiveMinimum':
      case 'exclusiveMaximum':
        // OpenAPI 3.0 booleans; a JSON Schema 2020 number means "bound, exclusive".
        if (typeof value === 'boolean') {
          if (value) out[key] = true;
        } else if (typeof value === 'number') {
          out[key === 'exclusiveMinimum' ? 'minimum' : 'maximum'] = value;
          out[key] = true;
        } else fail(path, `${key} must be a boolean or number`);
        break;
      case 'items':
        if (!isObject(value)) fail(path, 'tuple items have no structural equivalent');
        out.items = convert(root, value as Json, `${path}[]`);
        break;
      case 'additionalProperties':
        if (value === false) break; // structural schemas prune unknown fields anyway
        if (value === true || (isObject(value) && Object.keys(value).length === 0)) {
          // z.unknown() values, or z.looseObject(): keep whatever the client sends.
          out['x-kubernetes-preserve-unknown-fields'] = true;
          break;
        }
        if (!isObject(value)) fail(path, 'additionalProperties must be a schema');
        out.additionalProperties = convert(root, value as Json, `${path}.*`);
        break;
      case 'propertyNames': {
        const names = isObject(value) ? flatten(root, value, path) : {};
        const constrained = Object.keys(names).filter((k) => k !== 'type');
        if (names['type'] !== 'string' || constrained.length > 0)
          fail(
            path,
            'constrained map keys cannot be expressed in a CRD schema; use a CEL rule on the map instead',
          );
        break;
      }
      case 'x-kubernetes-validations':
        if (!Array.isArray(value)) fail(path, 'x-kubernetes-validations must be a list');
        out['x-kubernetes-validations'] = (value as unknown[]).map((rule) => celRule(rule, path));
        break;
      case 'uniqueItems':
        if (value === true) fail(path, 'uniqueItems is forbidden in CRDs; use x-kubernetes-list-type: set');
        break;
      default:
        fail(path, `unsupported keyword ${key}`);
    }
  }
  const properties = node['properties'];
  if (properties !== undefined) {
    if (!isObject(properties)) fail(path, 'properties must be an object');
    out.properties = {};
    for (const [name, child] of Object.entries(properties as Json)) {
      if (!isObject(child)) fail(`${path}.${name}`, 'schema must be an object');
      out.properties[name] = convert(root, child as Json, path ? `${path}.${name}` : name);
    }
    if (!out.type) out.type = 'object';
  }
  const required = node['required'];
  if (Array.isArray(required) && required.length > 0) out.required = required.map(String);
  if (out.properties && out['x-kubernetes-preserve-unknown-fields'] && out.additionalProperties)
    delete out.additionalProperties;
  if (out.properties && out.additionalProperties)
    fail(path, 'properties and additionalProperties are mutually exclusive in a structural schema');
  if (out.additionalProperties && out.type !== 'object') out.type = 'object';
  if (!out.type && !out['x-kubernetes-int-or-string']) {
    const typed = Object.keys(out).filter((k) => k !== 'description' && k !== 'title' && k !== 'default');
    if (typed.length > 0 && !out['x-kubernetes-preserve-unknown-fields'])
      fail(path, `node without a type (${typed.join(', ')})`);
    out['x-kubernetes-preserve-unknown-fields'] = true; // z.unknown() / z.any(): any JSON value
  }
  if (out.enum && out.enum.length === 0) fail(path, 'empty enum');
  return orderKeys(out);
}

function celRule(rule: unknown, path: string): CelRule {
  if (!isObject(rule) || typeof rule['rule'] !== 'string' || typeof rule['message'] !== 'string')
    return fail(path, 'a CEL rule needs a rule and a message');
  const out: CelRule = { rule: rule['rule'], message: rule['message'] };
  if (typeof rule['fieldPath'] === 'string') out.fieldPath = rule['fieldPath'];
  if (typeof rule['reason'] === 'string') out.reason = rule['reason'];
  return out;
}

/** zod → JSON Schema, with the settings every CRD conversion uses. */
export function zodToJsonSchema(schema: z.ZodType): Json {
  return z.toJSONSchema(schema, { target: 'openapi-3.0', io: 'input', unrepresentable: 'any' }) as Json;
}

/** zod schema → structural CRD schema node. `path` only names the node in error messages. */
export function toStructuralSchema(schema: z.ZodType, path = ''): JSONSchemaProps {
  const root = zodToJsonSchema(schema);
  return convert(root, root, path);
}

const API_VERSION_DESCRIPTION =
  'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources';
const KIND_DESCRIPTION =
  'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds';

/** Builds the CustomResourceDefinition of one kind. Pure: same input, same object. */
export function buildCrd(kind: KindEntry): CustomResourceDefinition {
  const { info } = kind;
  const whole = zodToJsonSchema(kind.schema);
  const rootRequired = Array.isArray(whole['required']) ? whole['required'].map(String) : [];
  const spec = toStructuralSchema(kind.spec, 'spec');
  const status = toStructuralSchema(kind.status, 'status');
  // The root-level `required` comes from the whole object: Project's spec has a default, so the
  // API server fills it in and it must not be required.
  const required = ['spec', 'status'].filter((k) => rootRequired.includes(k));
  const openAPIV3Schema: JSONSchemaProps = orderKeys({
    description: info.description,
    type: 'object',
    properties: {
      apiVersion: { description: API_VERSION_DESCRIPTION, type: 'string' },
      kind: { description: KIND_DESCRIPTION, type: 'string' },
      // The API server forbids anything but `type: object` here (even a description).
      metadata: { type: 'object' },
      spec,
      status,
    },
    ...(required.length > 0 ? { required } : {}),
  });
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${info.plural}.${GROUP}`,
      labels: { 'app.kubernetes.io/part-of': 'switchyard' },
    },
    spec: {
      group: GROUP,
      names: {
        kind: info.kind,
        listKind: `${info.kind}List`,
        plural: info.plural,
        singular: info.singular,
        shortNames: [...info.shortNames],
        categories: [...info.categories],
      },
      scope: 'Namespaced',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: info.printerColumns.map((c) => ({
            name: c.name,
            type: c.type,
            jsonPath: c.jsonPath,
            description: c.description,
            ...(c.priority !== undefined ? { priority: c.priority } : {}),
          })),
          schema: { openAPIV3Schema },
        },
      ],
    },
  };
}

/** The CRDs of every kind, in KINDS order. */
export function buildAllCrds(kinds: readonly KindEntry[] = KINDS): CustomResourceDefinition[] {
  return kinds.map(buildCrd);
}

/** File name of a CRD inside crds/. */
export const crdFileName = (crd: CustomResourceDefinition): string => `${crd.metadata.name}.yaml`;

/**
 * Renders a CRD as YAML. YAML 1.1 quoting keeps strings such as "on" or "yes" strings for the
 * Go (sigs.k8s.io/yaml) readers; no line folding and no anchors, so diffs stay readable.
 */
export function renderCrd(crd: CustomResourceDefinition): string {
  return CRD_HEADER + stringify(crd, { version: '1.1', lineWidth: 0, aliasDuplicateObjects: false });
}

/** Every generated file: name inside crds/ → content. */
export function renderCrdFiles(
  crds: readonly CustomResourceDefinition[] = buildAllCrds(),
): Map<string, string> {
  return new Map(crds.map((crd) => [crdFileName(crd), renderCrd(crd)]));
}
