import { GatewayError } from '../errors/index.ts';

/**
 * What one endpoint does with the top-level parameters of its body, the same rule on every surface
 * (chat, completions, embeddings, images, speech, Responses, Messages). Every parameter its schema
 * does not know is refused: a zod object would otherwise strip it, i.e. drop it silently.
 */
export interface ParamRules {
  /** The parameters the endpoint's schema names (the refused ones included). */
  known: ReadonlySet<string>;
  /**
   * Parameters the gateway cannot honour, each with the values that ask for nothing (as a list,
   * built once: the check runs on every request); besides those, absent, null and false count as
   * not set.
   */
  refused: readonly (readonly [string, readonly unknown[]])[];
  /** Counts of which only 1 is served (`n`, `best_of`): a number above 1 is refused. */
  single: readonly string[];
  /** Object parameters whose own fields are checked: the fields the endpoint reads. */
  fields: readonly FieldRule[];
  /** List parameters whose values are checked: the values the endpoint takes. */
  values: readonly ValueRule[];
}

interface FieldRule {
  param: string;
  known: ReadonlySet<string>;
  /** What the refusal adds after "is not supported": by default, "by this gateway". */
  says: string | undefined;
}

interface ValueRule {
  param: string;
  allowed: readonly string[];
}

export interface ParamRulesOptions {
  single?: readonly string[];
  /** By object parameter: the fields it takes, and what its refusal says instead of "by this gateway". */
  fields?: Readonly<Record<string, { known: readonly string[]; says?: string }>>;
  /** By list parameter: the values it takes. */
  values?: Readonly<Record<string, readonly string[]>>;
}

/** A refusal of what the gateway cannot honour: 400 `unsupported_parameter` naming the field. */
export const unsupported = (param: string, message: string, hint?: string): GatewayError =>
  new GatewayError('unsupported_parameter', message, { param, ...(hint ? { hint } : {}) });

/** `[]` among the values that ask for nothing stands for any empty list. */
const notSet = (v: unknown, asksNothing: readonly unknown[]): boolean =>
  v === undefined ||
  v === null ||
  v === false ||
  asksNothing.includes(v) ||
  (Array.isArray(v) && v.length === 0 && asksNothing.some((x) => Array.isArray(x) && x.length === 0));

const isRecord = (v: unknown): v is Record<string, unknown> =>
  !!v && typeof v === 'object' && !Array.isArray(v);

/**
 * The rules of an endpoint whose schema is `shape` and that refuses `refused` when set (each with
 * the values that ask for nothing).
 */
export function paramRules(
  shape: Record<string, unknown>,
  refused: Readonly<Record<string, readonly unknown[]>> = {},
  opts: ParamRulesOptions = {},
): ParamRules {
  return {
    known: new Set(Object.keys(shape)),
    refused: Object.entries(refused),
    single: opts.single ?? [],
    fields: Object.entries(opts.fields ?? {}).map(([param, f]) => ({
      param,
      known: new Set(f.known),
      says: f.says,
    })),
    values: Object.entries(opts.values ?? {}).map(([param, allowed]) => ({ param, allowed })),
  };
}

/** Each of `names` refused whenever it asks for something (any value but absent, null, false or []). */
export const refusedWhenSet = (names: readonly string[]): Record<string, readonly unknown[]> =>
  Object.fromEntries(names.map((name) => [name, [[]]]));

/**
 * Refuses, before schema validation names anything else, what the endpoint cannot honour, in this
 * order: the refused parameters, a count above 1, any parameter the schema does not know, unknown
 * fields of the checked objects, and values the checked lists do not take. A body that is not an
 * object is left to the schema's own error.
 */
export function refuseParams(raw: unknown, rules: ParamRules): void {
  if (!isRecord(raw)) return;
  const body = raw;
  for (const [name, asksNothing] of rules.refused)
    if (!notSet(body[name], asksNothing))
      throw unsupported(name, `The parameter "${name}" is not supported by this gateway.`);
  for (const name of rules.single) {
    const v = body[name];
    if (typeof v === 'number' && v > 1)
      throw unsupported(name, `${name} must be 1: one choice per request is supported.`);
  }
  for (const name in body) {
    if (rules.known.has(name) || !Object.hasOwn(body, name)) continue;
    const v = body[name];
    if (v !== undefined && v !== null)
      throw unsupported(name, `The parameter "${name}" is not known to this gateway.`);
  }
  for (const { param, known, says } of rules.fields) {
    const obj = body[param];
    if (isRecord(obj))
      for (const [name, v] of Object.entries(obj))
        if (!known.has(name) && v !== undefined && v !== null)
          throw unsupported(
            `${param}.${name}`,
            `The parameter "${param}.${name}" is not supported${says ? `: ${says}` : ' by this gateway'}.`,
          );
  }
  for (const { param, allowed } of rules.values) {
    const list = body[param];
    if (Array.isArray(list))
      for (const v of list)
        if (!allowed.includes(String(v)))
          throw unsupported(
            param,
            `${param} "${String(v)}" is not supported: only ${allowed.join(', ')} ${allowed.length === 1 ? 'is' : 'are'}.`,
          );
  }
}
