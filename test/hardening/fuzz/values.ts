/**
 * Hostile JSON for the fuzz suite: values and whole bodies an attacker would send. Some cannot be
 * built as JavaScript values (nesting past what JSON.stringify survives, duplicate keys, numbers
 * JSON.parse turns into Infinity), so bodies are written with `toJson`, which splices Raw text in.
 */
import fc from 'fast-check';

/** JSON text put into a body as is. */
export class Raw {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
}

/** JSON text of `v`, with Raw parts spliced in verbatim and own `__proto__` keys kept. */
export function toJson(v: unknown): string {
  if (v instanceof Raw) return v.text;
  if (Array.isArray(v)) return `[${v.map(toJson).join(',')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}:${toJson(x)}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

export const nested = (depth: number, asArray: boolean): Raw =>
  new Raw(
    asArray ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`,
  );

export const POLLUTING_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty'];

/** A 5 MB JSON string, built once. */
export const FIVE_MB = new Raw(JSON.stringify('x'.repeat(5 * 1024 * 1024)));

/** One hostile value: wrong types, extreme numbers, NUL bytes, deep nesting, polluting keys, duplicates. */
export const nasty: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 5, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom<unknown>(
      new Raw('1e400'),
      new Raw('-1e400'),
      new Raw('123456789012345678901234567890'),
      new Raw('-0'),
      1e308,
      2 ** 53 + 1,
      -1,
      0.5,
      4294967297,
    ),
  },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom('\u0000', 'a\u0000b', '\ud800', '\u202e', '', ' ', '💥'.repeat(40)),
  },
  {
    weight: 3,
    arbitrary: fc
      .tuple(fc.integer({ min: 60, max: 12_000 }), fc.boolean())
      .map(([depth, asArray]) => nested(depth, asArray)),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      new Raw('{"__proto__":{"polluted":true}}'),
      new Raw('{"constructor":{"prototype":{"polluted":true}}}'),
      new Raw('{"a":1,"a":{"b":2},"a":[3]}'),
      new Raw('{"prototype":{"polluted":true},"toString":1}'),
    ),
  },
  { weight: 1, arbitrary: fc.integer({ min: 10_000, max: 200_000 }).map((n) => 'y'.repeat(n)) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>({}, [], null, true, false, [null], { '': '' }) },
);

export type Path = (string | number)[];
export type Mutation =
  | { op: 'set'; path: Path; value: unknown }
  | { op: 'delete'; path: Path }
  | { op: 'extra'; key: string; value: unknown };

/** Mutations at the given paths of a body (and extra top-level keys, polluting ones included). */
export function mutations(paths: readonly Path[]): fc.Arbitrary<Mutation[]> {
  const one: fc.Arbitrary<Mutation> = fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({
        op: fc.constant('set' as const),
        path: fc.constantFrom(...paths),
        value: nasty,
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({ op: fc.constant('delete' as const), path: fc.constantFrom(...paths) }),
    },
    {
      weight: 2,
      arbitrary: fc.record({
        op: fc.constant('extra' as const),
        key: fc.oneof(fc.constantFrom(...POLLUTING_KEYS), fc.string({ maxLength: 16 })),
        value: nasty,
      }),
    },
  );
  return fc.array(one, { minLength: 1, maxLength: 3 });
}

type Json = Record<string | number, unknown>;
const isContainer = (v: unknown): v is Json => typeof v === 'object' && v !== null && !(v instanceof Raw);
const define = (o: Json, k: string | number, value: unknown) =>
  Object.defineProperty(o, k, { value, enumerable: true, writable: true, configurable: true });

/** Applies mutations to a copy of `body`; a path through a non-container is left alone. */
export function mutate(body: Record<string, unknown>, ms: readonly Mutation[]): Record<string, unknown> {
  const copy = structuredClone(body) as Json;
  for (const m of ms) {
    if (m.op === 'extra') {
      define(copy, m.key, m.value);
      continue;
    }
    let cur: unknown = copy;
    for (const key of m.path.slice(0, -1)) cur = isContainer(cur) ? cur[key] : undefined;
    if (!isContainer(cur)) continue;
    const last = m.path[m.path.length - 1] as string | number;
    if (m.op === 'delete') delete cur[last];
    else define(cur, last, m.value);
  }
  return copy;
}

/** Every path of a body, down to `maxDepth` (the places mutations aim at). */
export function pathsOf(body: unknown, maxDepth = 5, prefix: Path = []): Path[] {
  if (!isContainer(body) || prefix.length >= maxDepth) return [];
  return Object.keys(body).flatMap((k) => {
    const key = Array.isArray(body) ? Number(k) : k;
    const here = [...prefix, key];
    return [here, ...pathsOf((body as Json)[key], maxDepth, here)];
  });
}

/** Raw body texts that are not what the endpoint wants: garbage, truncations, duplicates, pollution. */
export function rawBodies(valid: string): fc.Arbitrary<string> {
  return fc.oneof(
    fc.string({ maxLength: 120 }),
    fc.nat({ max: valid.length }).map((n) => valid.slice(0, n)),
    fc.constantFrom(
      '',
      'null',
      '[]',
      '"a string"',
      '{"__proto__":{"polluted":true}}',
      `${valid.slice(0, -1)},"__proto__":{"polluted":true}}`,
      `${valid.slice(0, -1)},"constructor":{"prototype":{"polluted":true}}}`,
      `{"model":"a","model":"b",${valid.slice(1)}`,
      `${'['.repeat(100_000)}`,
    ),
  );
}

/**
 * A path parameter the route always receives (the URL parser resolves `.`/`..` segments, also
 * percent-encoded, and an empty one is no parameter): for routes whose requests the checks count.
 */
export const routedParam: fc.Arbitrary<string> = fc
  .oneof(
    fc.string({ minLength: 1, maxLength: 40 }).map(encodeURIComponent),
    fc.uuid().map(String),
    fc.constantFrom('%00', 'a%20b', '__proto__', 'constructor', 'x'.repeat(300), '%2F..%2F'),
  )
  .filter((p) => !/^(?:\.|%2e){1,2}$/i.test(p));

/** A path parameter: plain names, encodings, traversal, NUL, long. */
export const pathParam: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 40 }).map(encodeURIComponent),
  fc.uuid().map(String),
  fc.constantFrom(
    '..%2F..%2Fetc%2Fpasswd',
    '%00',
    '%2e%2e',
    'a%20b',
    '__proto__',
    'constructor',
    'x'.repeat(300),
  ),
);

/** A query string of hostile parameters (repeated keys, NUL, polluting names, long values). */
export const queryString = (known: readonly string[]): fc.Arbitrary<string> =>
  fc
    .array(
      fc.tuple(
        fc.oneof(fc.constantFrom(...known, ...POLLUTING_KEYS), fc.string({ maxLength: 10 })),
        fc.oneof(
          fc.string({ maxLength: 30 }),
          fc.constantFrom(
            '\u0000',
            '-1',
            '1e400',
            '99999999999999999999',
            '2026-13-45T99:99:99Z',
            'x'.repeat(2000),
          ),
        ),
      ),
      { maxLength: 5 },
    )
    .map((pairs) => pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&'));
