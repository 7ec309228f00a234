import { z } from 'zod';
import type { CelRule } from '../resources/index.ts';
import type { JSONSchemaProps, SchemaType } from './crd-types.ts';
import { fail, flatten, isObject, type Json } from './flatten.ts';
import {
  DROPPED_KEYS,
  KNOWN_FORMATS,
  orderKeys,
  SAFE_INT,
  SCALAR_KEYS,
  SCHEMA_TYPES,
} from './schema-keywords.ts';

/**
 * zod's JSON Schema (OpenAPI 3.0 flavour) rewritten into a Kubernetes *structural* schema: every
 * node has a type (or preserves unknown fields), no anyOf/oneOf/allOf/$ref, no additionalProperties
 * next to properties, no zod safe-integer noise, and keys in a fixed order so the YAML is
 * deterministic. Anything the API server could not take is a thrown error naming the schema path,
 * never silently dropped.
 */

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
