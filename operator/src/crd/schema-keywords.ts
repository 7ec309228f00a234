import type { JSONSchemaProps } from './crd-types.ts';

/** Which JSON Schema keywords a structural CRD schema keeps, in which order, and which it drops. */

/** Formats the API server validates (k8s.io/kube-openapi strfmt plus the apiextensions extras). */
export const KNOWN_FORMATS = new Set([
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
export const SAFE_INT = Number.MAX_SAFE_INTEGER;

/** Output key order of a schema node; properties keep their declaration order. */
export const KEY_ORDER = [
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
export const SCALAR_KEYS = new Set<string>([
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
export const DROPPED_KEYS = new Set([
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

export const SCHEMA_TYPES = new Set<string>(['object', 'array', 'string', 'integer', 'number', 'boolean']);

/** A schema node with its keys in KEY_ORDER, so the YAML is deterministic. */
export function orderKeys(node: JSONSchemaProps): JSONSchemaProps {
  const out: Record<string, unknown> = {};
  for (const key of KEY_ORDER) if (node[key] !== undefined) out[key] = node[key];
  return out as JSONSchemaProps;
}
