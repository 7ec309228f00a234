/**
 * Schema-conforming fake JSON for simulated structured answers and tool-call arguments.
 *
 * Deliberately independent of the gateway's own sampler (gateway/src/structured/sample.ts, used by test
 * mode): the simulator plays the provider the gateway is tested against, so sharing one generator would
 * let one bug hide on both sides. json-schema-faker does the work; this file only makes it deterministic
 * (the seed string is hashed into the faker's numeric seed), reads Gemini's OpenAPI dialect
 * (upper-case types, `nullable`, int64 bounds as strings), works around one faker bug (0.6.x draws
 * from [-1000, 1000] when only one bound is given, so `minimum: 1900` produced 1336: the open side
 * gets a window), and caps sizes so that a hostile `minItems: 1e9` or nested `minItems: 1000`
 * cannot stall the simulator (such a sample is then cut short and does not conform).
 */
import { generateSync, type JsonSchema } from 'json-schema-faker';

/** Elements (array items times enclosing array items) and characters one sample may ask for. */
const MAX_ELEMENTS = 2_000;
const MAX_CHARS = 20_000;
const COUNT_KEYWORDS = new Set(['minItems', 'maxItems', 'minProperties', 'maxProperties']);
const LENGTH_KEYWORDS = new Set(['minLength', 'maxLength']);
/** The faker's range when a schema gives no bound. */
const DEFAULT_SPAN = 1000;
/** Keywords that hold data rather than subschemas: copied untouched. */
const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples', 'example']);
/** OpenAPI 3.0 (Gemini `responseSchema`/`parameters`) keywords JSON Schema does not know. */
const OPENAPI_ONLY = new Set(['nullable', 'propertyOrdering']);
/** Numeric keywords Gemini may send as strings (proto int64/double in JSON). */
const NUMBER_KEYWORDS = new Set(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf']);

/** djb2-xor over the seed text: any stable 32-bit spread works; the faker wants a number. */
function seedNumber(text: string): number {
  let h = 5381;
  for (let i = 0; i < text.length; i++) h = (Math.imul(h, 33) ^ text.charCodeAt(i)) >>> 0;
  return h || 1;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function normalizeType(type: unknown, nullable: boolean): unknown {
  const lower = (t: unknown) => (typeof t === 'string' ? t.toLowerCase() : t);
  const types = Array.isArray(type) ? type.map(lower) : type === undefined ? [] : [lower(type)];
  if (nullable && types.length > 0 && !types.includes('null')) types.push('null');
  if (types.length === 0) return undefined;
  return types.length === 1 ? types[0] : types;
}

const num = (v: unknown): number | undefined =>
  typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : undefined;

/** Gives a one-sided numeric range its other side, so the faker draws inside it. */
function closeRange(out: Record<string, unknown>): void {
  const low = num(out.minimum) ?? num(out.exclusiveMinimum);
  const high = num(out.maximum) ?? num(out.exclusiveMaximum);
  if (low !== undefined && high === undefined && low >= DEFAULT_SPAN) out.maximum = low + DEFAULT_SPAN;
  if (high !== undefined && low === undefined && high <= -DEFAULT_SPAN) out.minimum = high - DEFAULT_SPAN;
}

/**
 * Rewrites one schema (and its subschemas) into plain JSON Schema the faker understands. `outer` is
 * how many copies of this node the enclosing arrays already ask for, so nested sizes share one budget.
 */
function normalize(node: unknown, outer = 1): unknown {
  if (Array.isArray(node)) return node.map((n) => normalize(n, outer));
  if (!isRecord(node)) return node;
  const out: Record<string, unknown> = {};
  const count = Math.min(Math.max(1, num(node.minItems) ?? 1), Math.floor(MAX_ELEMENTS / outer) || 1);
  for (const [key, value] of Object.entries(node)) {
    const n = num(value);
    if (DATA_KEYWORDS.has(key)) out[key] = value;
    else if (OPENAPI_ONLY.has(key) || key === 'type') continue;
    else if (COUNT_KEYWORDS.has(key) && n !== undefined)
      out[key] = Math.min(n, Math.floor(MAX_ELEMENTS / outer) || 1);
    else if (LENGTH_KEYWORDS.has(key) && n !== undefined)
      out[key] = Math.min(n, Math.floor(MAX_CHARS / outer) || 1);
    else if (NUMBER_KEYWORDS.has(key) && n !== undefined) out[key] = n;
    else if (key === 'properties' || key === '$defs' || key === 'definitions' || key === 'patternProperties')
      out[key] = isRecord(value)
        ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalize(v, outer)]))
        : value;
    else if (key === 'items' || key === 'prefixItems' || key === 'contains')
      out[key] = normalize(value, outer * count);
    else out[key] = normalize(value, outer);
  }
  const type = normalizeType(node.type, node.nullable === true);
  if (type !== undefined) out.type = type;
  closeRange(out);
  return out;
}

/** The same (schema, seed) always gives the same value; different seeds usually give different ones. */
export function fakeFromSchema(schema: unknown, seed: string): unknown {
  const normalized = normalize(schema ?? {});
  const json: JsonSchema =
    typeof normalized === 'boolean' ? normalized : isRecord(normalized) ? normalized : {};
  return generateSync(json, {
    seed: seedNumber(seed),
    // Every declared property, as a model filling in a form would (and as tests reading an optional
    // field expect); recursive $refs stop after a few levels.
    alwaysFakeOptionals: true,
    refDepthMax: 3,
    maxDepth: 8,
  });
}
