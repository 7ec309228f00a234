/**
 * Fastify's JSON-schema compilers, switched off. Every body, query and parameter is validated with
 * zod where a route reads it, and every answer is serialised with `JSON.stringify`, so Fastify's
 * default compilers (Ajv for validation, fast-json-stringify for answers) would only be loaded, never
 * used: about 110 module files, and with structured/validate.ts's Ajv loaded on first use ~3 MB of
 * an idle pod's RSS (docs/benchmarks.md, "What a gateway pod loads"). With these factories Fastify
 * loads neither. A route that declares a `schema` fails when the app is built, naming the reason,
 * rather than being validated in a second vocabulary.
 */
function refuse(what: string): never {
  throw new Error(
    `a route declared a ${what} schema: the gateway validates with zod in the route and loads no JSON-schema compiler`,
  );
}

export const ZOD_ONLY = {
  compilersFactory: {
    buildValidator: () => refuse('validation'),
    buildSerializer: () => refuse('response'),
  },
};
