/**
 * OpenAI's OpenAPI description turned into JSON Schema that ajv validates with, and a validator per
 * named component. The description is OpenAPI 3.1 (JSON Schema 2020-12) with the 3.0 dialect's
 * leftovers: `nullable`, `discriminator` and `x-` extensions, handled here.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

type Node = Record<string, unknown>;

const isNode = (v: unknown): v is Node => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * `nullable: true` admits null beside whatever else the node admits. With a `type`, null joins the
 * type (and the enum, which would otherwise still refuse it); without one (a bare `$ref`, an
 * `anyOf`), the node becomes "this or null".
 */
function withNull(node: Node): Node {
  const { nullable: _, ...rest } = node;
  if (rest.type !== undefined) {
    const types = Array.isArray(rest.type) ? [...rest.type] : [rest.type];
    if (!types.includes('null')) types.push('null');
    const out: Node = { ...rest, type: types };
    if (Array.isArray(rest.enum) && !rest.enum.includes(null)) out.enum = [...rest.enum, null];
    return out;
  }
  return { anyOf: [rest, { type: 'null' }] };
}

/**
 * One schema node in JSON Schema terms. `discriminator` is dropped: every discriminated union in the
 * description also lists its variants in `anyOf`/`oneOf`, whose `type` consts tell them apart, so
 * the union validates the same without it. Extensions (`x-…`) and OpenAPI-only annotations go too.
 */
export function toJsonSchema(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toJsonSchema);
  if (!isNode(value)) return value;
  const out: Node = {};
  for (const [key, child] of Object.entries(value)) {
    if (key.startsWith('x-') || key === 'discriminator' || key === 'example') continue;
    out[key] = NAMED_SCHEMAS.has(key) && isNode(child) ? schemaMap(child) : toJsonSchema(child);
  }
  if (out.nullable === true) return withNull(out);
  delete out.nullable;
  return out;
}

/** Keywords whose value maps arbitrary names (a property called `example` too) to schemas. */
const NAMED_SCHEMAS = new Set([
  'properties',
  'patternProperties',
  '$defs',
  'definitions',
  'dependentSchemas',
]);

function schemaMap(map: Node): Node {
  return Object.fromEntries(Object.entries(map).map(([name, schema]) => [name, toJsonSchema(schema)]));
}

export interface OpenApiCopy {
  /** The validator for components.schemas[name]. */
  validator(name: string): ValidateFunction;
  /** Every stream event schema of ResponseStreamEvent, by the event's `type`. */
  responseEventSchemas: ReadonlyMap<string, string>;
  source: { commit: string; date: string };
}

const ID = 'https://switchyard.test/openai-openapi.json';

export function loadOpenApiCopy(): OpenApiCopy {
  const file = join(import.meta.dirname, 'openai-openapi', 'openapi.reduced.json');
  const doc = JSON.parse(readFileSync(file, 'utf8')) as {
    'x-source': { commit: string; date: string };
    components: { schemas: Record<string, Node> };
  };
  const schemas = doc.components.schemas;
  // strict: false because the description carries annotations ajv does not know (`deprecated` on
  // refs, `title` beside `$ref`, formats such as `int64`); they describe, they do not constrain.
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  addFormats.default(ajv);
  ajv.addSchema({ $id: ID, components: { schemas: toJsonSchema(schemas) } });
  const cache = new Map<string, ValidateFunction>();
  const validator = (name: string): ValidateFunction => {
    let fn = cache.get(name);
    if (!fn) {
      if (!(name in schemas)) throw new Error(`no schema ${name} in the pinned copy`);
      fn = ajv.compile({ $ref: `${ID}#/components/schemas/${name}` });
      cache.set(name, fn);
    }
    return fn;
  };
  const responseEventSchemas = new Map<string, string>();
  const union = schemas.ResponseStreamEvent?.anyOf as Node[];
  for (const variant of union) {
    const name = String(variant.$ref).split('/').at(-1) as string;
    const type = (schemas[name]?.properties as Record<string, Node> | undefined)?.type;
    const values = type?.enum ?? (type?.const !== undefined ? [type.const] : []);
    for (const t of values as string[]) responseEventSchemas.set(t, name);
  }
  return { validator, responseEventSchemas, source: doc['x-source'] };
}

/** ajv's errors as one line each, for a failure message that says what and where. */
export function describeErrors(errors: readonly ErrorObject[] | null | undefined): string[] {
  return (errors ?? []).map(
    (e) => `${e.instancePath || '/'} ${e.message ?? e.keyword} ${JSON.stringify(e.params)}`,
  );
}
