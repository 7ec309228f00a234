/**
 * Deterministic sample values from a JSON Schema.
 *
 * Used wherever something must produce a *valid* structured reply without a model: the provider
 * simulator (response_format json_schema, tool-call arguments, Gemini responseSchema) and the gateway's
 * offline test mode. The same (schema, seed) always yields the same value, so tests can assert on it.
 *
 * Supported: type object/array/string/number/integer/boolean/null (also upper-case Gemini/OpenAPI names
 * like "STRING"), type arrays such as ["string","null"] (first non-null type wins), enum (first value),
 * const, properties/required (every declared property is emitted; below the depth limit only the required
 * ones, so recursive schemas terminate), additionalProperties, items/prefixItems (and draft-4 tuple items),
 * minItems/maxItems, minLength/maxLength, minimum/maximum/exclusive bounds/multipleOf, string formats
 * (date-time, date, time, email, uuid, uri/url, hostname, ipv4, ipv6), anyOf/oneOf (first non-null branch),
 * allOf (merged), $ref to any local JSON pointer (#/$defs/..., #/definitions/...), boolean schemas.
 * Not supported: pattern (a fixed string is emitted), if/then/else, not, dependent schemas.
 */

type Schema = Record<string, unknown>;

/** Past this nesting depth only required properties and minItems elements are produced. */
const SOFT_DEPTH = 6;
/** Hard stop for pathological self-references that are required at every level. */
const HARD_DEPTH = 32;
/**
 * Size budget of one sample. Schemas can come from requests (response_format, tool parameters in test
 * mode), so `minItems: 1e9`, `minLength: 1e9` or nested minItems must not stall or exhaust the process:
 * past the budget the sample is cut short (and then simply fails schema validation).
 */
const MAX_NODES = 100_000;
const MAX_CHARS = 1_000_000;

export function sampleFromSchema(schema: unknown, seed = ''): unknown {
  return sample(schema, {
    root: schema,
    seed,
    depth: 0,
    path: '$',
    budget: { nodes: MAX_NODES, chars: MAX_CHARS },
  });
}

interface Ctx {
  root: unknown;
  seed: string;
  depth: number;
  path: string;
  /** Shared by every child context of one sample. */
  budget: { nodes: number; chars: number };
}

function isObject(v: unknown): v is Schema {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** FNV-1a, 32 bit: tiny, fast and stable across runs and platforms. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function hex(ctx: Ctx, salt = ''): string {
  return hash(`${ctx.seed}|${ctx.path}|${salt}`).toString(16).padStart(8, '0');
}

function child(ctx: Ctx, segment: string): Ctx {
  return { ...ctx, depth: ctx.depth + 1, path: `${ctx.path}.${segment}` };
}

function resolveRef(ref: string, root: unknown): unknown {
  if (!ref.startsWith('#')) return undefined;
  const pointer = ref.slice(1);
  if (pointer === '' || pointer === '/') return root;
  let node: unknown = root;
  for (const raw of pointer.slice(1).split('/')) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (isObject(node)) node = node[key];
    else if (Array.isArray(node)) node = node[Number(key)];
    else return undefined;
  }
  return node;
}

/** allOf parts merged per sample at most: parts that refer back to an enclosing schema would merge forever. */
const MAX_MERGES = 1000;

function mergeAllOf(schema: Schema, ctx: Ctx, merges = { left: MAX_MERGES }): Schema {
  const parts = Array.isArray(schema.allOf) && merges.left-- > 0 ? schema.allOf : [];
  const merged: Schema = { ...schema };
  delete merged.allOf;
  const properties: Schema = isObject(schema.properties) ? { ...schema.properties } : {};
  const required = new Set<string>(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  for (const part of parts) {
    const p = deref(part, ctx);
    if (!isObject(p)) continue;
    const flat = p.allOf ? mergeAllOf(p, ctx, merges) : p;
    for (const [k, v] of Object.entries(flat)) {
      if (k === 'properties' && isObject(v)) Object.assign(properties, v);
      else if (k === 'required' && Array.isArray(v)) for (const r of v) required.add(String(r));
      else if (!(k in merged)) merged[k] = v;
    }
  }
  if (Object.keys(properties).length > 0) merged.properties = properties;
  if (required.size > 0) merged.required = [...required];
  return merged;
}

function deref(schema: unknown, ctx: Ctx): unknown {
  let current = schema;
  // A chain of refs is followed; a cycle of pure refs is cut after a few hops.
  for (let hops = 0; hops < 16 && isObject(current) && typeof current.$ref === 'string'; hops++) {
    const target = resolveRef(current.$ref, ctx.root);
    const { $ref: _ignored, ...siblings } = current;
    current = isObject(target) ? { ...target, ...siblings } : siblings;
  }
  return current;
}

function isNullSchema(s: unknown): boolean {
  return isObject(s) && (s.type === 'null' || s.type === 'NULL');
}

function pickType(schema: Schema): string | undefined {
  const t = schema.type;
  if (typeof t === 'string') return t.toLowerCase();
  if (Array.isArray(t)) {
    const names = t.map((x) => String(x).toLowerCase());
    return names.find((x) => x !== 'null') ?? names[0];
  }
  if (isObject(schema.properties) || schema.additionalProperties !== undefined) return 'object';
  if (schema.items !== undefined || schema.prefixItems !== undefined) return 'array';
  if (schema.minLength !== undefined || schema.maxLength !== undefined || schema.format !== undefined) {
    return 'string';
  }
  if (schema.minimum !== undefined || schema.maximum !== undefined) return 'number';
  return undefined;
}

function sample(input: unknown, ctx: Ctx): unknown {
  if (ctx.depth > HARD_DEPTH || --ctx.budget.nodes < 0) return null;
  if (input === true || input === undefined) return null;
  if (input === false) return null;
  const resolved = deref(input, ctx);
  if (!isObject(resolved)) return null;
  const schema = Array.isArray(resolved.allOf) ? mergeAllOf(resolved, ctx) : resolved;

  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) {
    return schema.enum.find((v) => v !== null) ?? schema.enum[0];
  }
  const branches = Array.isArray(schema.anyOf)
    ? schema.anyOf
    : Array.isArray(schema.oneOf)
      ? schema.oneOf
      : null;
  if (branches && branches.length > 0) {
    const { anyOf: _a, oneOf: _o, ...rest } = schema;
    const branch = branches.find((b) => !isNullSchema(deref(b, ctx))) ?? branches[0];
    const chosen = deref(branch, ctx);
    return sample(isObject(chosen) ? { ...rest, ...chosen } : chosen, ctx);
  }

  switch (pickType(schema)) {
    case 'object':
      return sampleObject(schema, ctx);
    case 'array':
      return sampleArray(schema, ctx);
    case 'string':
      return sampleString(schema, ctx);
    case 'integer':
      return sampleNumber(schema, ctx, true);
    case 'number':
      return sampleNumber(schema, ctx, false);
    case 'boolean':
      return hash(`${ctx.seed}|${ctx.path}`) % 2 === 0;
    default:
      return null;
  }
}

function sampleObject(schema: Schema, ctx: Ctx): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const properties = isObject(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required.map(String) : []);
  const shallow = ctx.depth < SOFT_DEPTH;
  for (const [key, propSchema] of Object.entries(properties)) {
    if (!shallow && !required.has(key)) continue;
    out[key] = sample(propSchema, child(ctx, key));
  }
  // Required names without a declared schema still have to be present.
  for (const key of required) if (!(key in out)) out[key] = null;
  const min = typeof schema.minProperties === 'number' ? schema.minProperties : 0;
  const extra = isObject(schema.additionalProperties) ? schema.additionalProperties : {};
  let size = Object.keys(out).length;
  for (let i = 0; size < min && ctx.budget.nodes > 0; i++) {
    if (`key${i}` in out) continue;
    out[`key${i}`] = sample(extra, child(ctx, `key${i}`));
    size++;
  }
  return out;
}

function sampleArray(schema: Schema, ctx: Ctx): unknown[] {
  const prefix = Array.isArray(schema.prefixItems)
    ? schema.prefixItems
    : Array.isArray(schema.items)
      ? schema.items
      : [];
  const itemSchema = isObject(schema.items) || typeof schema.items === 'boolean' ? schema.items : {};
  const min = typeof schema.minItems === 'number' ? schema.minItems : 0;
  const max = typeof schema.maxItems === 'number' ? schema.maxItems : Number.POSITIVE_INFINITY;
  // One element by default makes samples illustrative; deep levels only emit what is required.
  const preferred = ctx.depth < SOFT_DEPTH ? Math.max(1, prefix.length) : 0;
  const count = Math.min(Math.max(min, preferred), max);
  const out: unknown[] = [];
  for (let i = 0; i < count && ctx.budget.nodes > 0; i++) {
    const s = i < prefix.length ? prefix[i] : itemSchema;
    out.push(sample(s, child(ctx, String(i))));
  }
  return out;
}

function sampleString(schema: Schema, ctx: Ctx): string {
  const h = hex(ctx);
  let value: string;
  switch (typeof schema.format === 'string' ? schema.format : '') {
    case 'date-time':
      value = new Date(Date.UTC(2024, 0, 1) + (Number.parseInt(h, 16) % 31_536_000) * 1000)
        .toISOString()
        .replace('.000Z', 'Z');
      break;
    case 'date':
      value = new Date(Date.UTC(2024, 0, 1) + (Number.parseInt(h, 16) % 365) * 86_400_000)
        .toISOString()
        .slice(0, 10);
      break;
    case 'time':
      value = '12:00:00Z';
      break;
    case 'email':
      value = `user-${h}@example.com`;
      break;
    case 'uuid': {
      const x = (h + hex(ctx, 'a') + hex(ctx, 'b') + hex(ctx, 'c')).slice(0, 32);
      value = `${x.slice(0, 8)}-${x.slice(8, 12)}-4${x.slice(13, 16)}-a${x.slice(17, 20)}-${x.slice(20, 32)}`;
      break;
    }
    case 'uri':
    case 'url':
    case 'iri':
      value = `https://example.com/${h}`;
      break;
    case 'hostname':
      value = `host-${h}.example.com`;
      break;
    case 'ipv4':
      value = `192.0.2.${Number.parseInt(h.slice(0, 2), 16) % 255}`;
      break;
    case 'ipv6':
      value = `2001:db8::${h.slice(0, 4)}`;
      break;
    default:
      value = `sample-${h}`;
  }
  const min = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : Number.POSITIVE_INFINITY;
  if (value.length < min) {
    const target = Math.min(min, value.length + Math.max(0, ctx.budget.chars));
    ctx.budget.chars -= target - value.length;
    value = value.padEnd(target, 'x');
  }
  if (value.length > max) value = value.slice(0, max);
  return value;
}

function sampleNumber(schema: Schema, ctx: Ctx, integer: boolean): number {
  const step = integer ? 1 : 0.5;
  let lo = typeof schema.minimum === 'number' ? schema.minimum : undefined;
  let hi = typeof schema.maximum === 'number' ? schema.maximum : undefined;
  // Draft-4 style booleans modify minimum/maximum; later drafts carry the bound itself.
  if (typeof schema.exclusiveMinimum === 'number') lo = schema.exclusiveMinimum + step;
  else if (schema.exclusiveMinimum === true && lo !== undefined) lo += step;
  if (typeof schema.exclusiveMaximum === 'number') hi = schema.exclusiveMaximum - step;
  else if (schema.exclusiveMaximum === true && hi !== undefined) hi -= step;

  let value: number;
  if (lo !== undefined && hi !== undefined) value = lo + (hi - lo) / 2;
  else if (lo !== undefined) value = lo;
  else if (hi !== undefined) value = Math.min(hi, 0);
  else value = hash(`${ctx.seed}|${ctx.path}`) % 100;

  const multipleOf = typeof schema.multipleOf === 'number' && schema.multipleOf > 0 ? schema.multipleOf : 0;
  if (multipleOf) {
    value = Math.ceil(value / multipleOf) * multipleOf;
    if (hi !== undefined && value > hi) value -= multipleOf;
  }
  if (integer) {
    value = Math.ceil(value);
    if (hi !== undefined && value > hi) value = Math.floor(hi);
  }
  return value;
}
