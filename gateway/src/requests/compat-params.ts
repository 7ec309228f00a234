import { GatewayError } from '../errors/index.ts';

/**
 * What one compatible endpoint does with the top-level parameters of its body. Every parameter its
 * schema does not know is refused: a zod object would otherwise strip it, i.e. drop it silently.
 */
export interface ParamRules {
  /** The parameters the endpoint's schema names (the refused ones included). */
  known: ReadonlySet<string>;
  /**
   * Parameters OpenAI takes that the gateway cannot honour, each with the values that ask for
   * nothing; besides those, absent, null and false count as not set.
   */
  refused: Readonly<Record<string, readonly unknown[]>>;
  /** `refused` as a list, built once: the check runs on every request. */
  refusedList: readonly (readonly [string, readonly unknown[]])[];
  /** Counts of which only 1 is served (`n`, `best_of`): a number above 1 is refused. */
  single: readonly string[];
  /** The fields of `stream_options` the endpoint reads, when it streams. */
  streamOptions?: ReadonlySet<string>;
}

const refuse = (param: string, message: string): GatewayError =>
  new GatewayError('unsupported_parameter', message, { param });

const notSet = (v: unknown, asksNothing: readonly unknown[]): boolean =>
  v === undefined || v === null || v === false || asksNothing.includes(v);

/** The rules of an endpoint whose schema is `shape` and that refuses `refused` when set. */
export function paramRules(
  shape: Record<string, unknown>,
  refused: Readonly<Record<string, readonly unknown[]>> = {},
  opts: { single?: readonly string[]; streamOptions?: readonly string[] } = {},
): ParamRules {
  return {
    known: new Set(Object.keys(shape)),
    refused,
    refusedList: Object.entries(refused),
    single: opts.single ?? [],
    ...(opts.streamOptions ? { streamOptions: new Set(opts.streamOptions) } : {}),
  };
}

/**
 * Refuses, before schema validation names anything else, what the endpoint cannot honour: the
 * refused parameters, a count above 1, any parameter the schema does not know, and unknown
 * `stream_options` fields. A body that is not an object is left to the schema's own error.
 */
export function refuseParams(raw: unknown, rules: ParamRules): void {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return;
  const body = raw as Record<string, unknown>;
  for (const [name, asksNothing] of rules.refusedList)
    if (!notSet(body[name], asksNothing))
      throw refuse(name, `The parameter "${name}" is not supported by this gateway.`);
  for (const name of rules.single) {
    const v = body[name];
    if (typeof v === 'number' && v > 1)
      throw refuse(name, `${name} must be 1: one choice per request is supported.`);
  }
  for (const name in body) {
    if (rules.known.has(name) || !Object.hasOwn(body, name)) continue;
    const v = body[name];
    if (v !== undefined && v !== null)
      throw refuse(name, `The parameter "${name}" is not known to this gateway.`);
  }
  const so = body.stream_options;
  if (rules.streamOptions && so && typeof so === 'object' && !Array.isArray(so))
    for (const [name, v] of Object.entries(so))
      if (!rules.streamOptions.has(name) && v !== undefined && v !== null)
        throw refuse(
          `stream_options.${name}`,
          `The parameter "stream_options.${name}" is not supported by this gateway.`,
        );
}
