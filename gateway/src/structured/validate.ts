import { createRequire } from 'node:module';
import type { Ajv2020, ValidateFunction } from 'ajv/dist/2020.js';
import type addFormats from 'ajv-formats';
import { GatewayError } from '../errors/index.ts';
import { jsonTooDeep, UPSTREAM_MAX_JSON_DEPTH } from '../json/depth.ts';

/**
 * Checks structured output against its JSON schema on the way back from the provider. Compiled
 * validators are cached: workflow schemas are compiled once per snapshot, request-supplied schemas
 * once per distinct schema (bounded).
 */

let ajv: Ajv2020 | undefined;

/**
 * Ajv and its formats, loaded with the first schema compiled (a synchronous `require`: both are
 * CommonJS, and compiling happens inside a request): a pod whose workflows and requests carry no
 * schema never holds them (docs/benchmarks.md, "What a gateway pod loads").
 */
function schemaCompiler(): Ajv2020 {
  if (ajv) return ajv;
  const require = createRequire(import.meta.url);
  const { Ajv2020: Ajv } = require('ajv/dist/2020.js') as typeof import('ajv/dist/2020.js');
  const formats = require('ajv-formats') as typeof addFormats;
  ajv = new Ajv({ strict: false, allErrors: false, validateFormats: true });
  formats.default(ajv);
  return ajv;
}

const byObject = new WeakMap<object, ValidateFunction>();
const byText = new Map<string, ValidateFunction>();
const MAX_TEXT_CACHE = 256;

export class SchemaCompileError extends Error {
  readonly code = 'SCHEMA_INVALID';
}

const ENDLESS = 'the schema refers to itself without end (a $ref cycle that never reaches a value)';

/** Values a validator is tried on once compiled: a schema that recurses on any value fails here. */
const PROBES: readonly unknown[] = [null, {}, [], '', 0, true];

function probe(fn: ValidateFunction): void {
  try {
    for (const v of PROBES) fn(v);
  } catch (err) {
    if (err instanceof RangeError) throw new SchemaCompileError(`invalid JSON schema: ${ENDLESS}`);
    throw err;
  }
}

function compile(schema: Record<string, unknown>): ValidateFunction {
  const cached = byObject.get(schema);
  if (cached) return cached;
  const text = JSON.stringify(schema);
  let fn = byText.get(text);
  if (!fn) {
    try {
      // Draft-07 style `$schema` URIs are accepted; Ajv2020 handles both for the keywords people use.
      const { $schema: _ignored, ...rest } = schema;
      fn = schemaCompiler().compile(rest);
    } catch (err) {
      throw new SchemaCompileError(`invalid JSON schema: ${(err as Error).message}`);
    }
    probe(fn);
    if (byText.size >= MAX_TEXT_CACHE) byText.delete(byText.keys().next().value as string);
    byText.set(text, fn);
  }
  byObject.set(schema, fn);
  return fn;
}

/** Throws SchemaCompileError for a schema Ajv cannot compile, so bad input gets a 400 before any provider call. */
export function assertCompilable(schema: Record<string, unknown>): void {
  compile(schema);
}

export type CheckResult = { ok: true; value: unknown } | { ok: false; message: string };

export function checkStructured(
  text: string | null,
  schema: Record<string, unknown> | undefined,
): CheckResult {
  if (text === null) return { ok: false, message: 'the model returned no content' };
  if (jsonTooDeep(text, UPSTREAM_MAX_JSON_DEPTH))
    return { ok: false, message: `the model output nests more than ${UPSTREAM_MAX_JSON_DEPTH} levels deep` };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, message: 'the model output is not valid JSON' };
  }
  if (!schema) return { ok: true, value };
  const fn = compile(schema);
  let valid: boolean;
  try {
    valid = fn(value) as boolean;
  } catch (err) {
    // A $ref cycle the probes did not reach: the request's schema is at fault, not the model.
    if (err instanceof RangeError)
      throw new GatewayError('invalid_request', `The structured output schema is not valid: ${ENDLESS}.`, {
        param: 'response_format',
      });
    throw err;
  }
  if (valid) return { ok: true, value };
  const e = fn.errors?.[0];
  return {
    ok: false,
    message:
      `the model output does not match the schema: ${e?.instancePath || '/'} ${e?.message ?? ''}`.trim(),
  };
}
