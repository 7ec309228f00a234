/**
 * The JSON Schema that zod emits, made single-node: local $refs resolved and anyOf/oneOf/allOf
 * merged away, as a structural schema needs. What has no structural equivalent is a thrown error
 * naming the schema path.
 */

export type Json = Record<string, unknown>;

export const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
export const fail = (path: string, message: string): never => {
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
export function flatten(root: Json, node: Json, path: string, seen: Set<string> = new Set()): Json {
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
