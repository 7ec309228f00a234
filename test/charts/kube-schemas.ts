/**
 * kubeconform schemas from the test API server's own OpenAPI v2 document, so rendered charts are
 * checked against exactly the Kubernetes version the tests install into, without downloading the
 * published schema set. Written the way openapi2jsonschema's standalone strict variant is: every
 * object refuses unknown fields, int-or-string and Quantity fields take numbers and strings, and
 * each file carries the definitions it references.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';

type Schema = Record<string, unknown>;

const gvk = z.object({ group: z.string(), version: z.string(), kind: z.string() });
const swaggerDoc = z.object({
  definitions: z.record(
    z.string(),
    z.looseObject({ 'x-kubernetes-group-version-kind': z.array(gvk).optional() }),
  ),
});

const REF_PREFIX = '#/definitions/';
const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';

/** Rewrites one schema node (recursively): strictness and the two dual-typed formats. */
function convert(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(convert);
  if (!node || typeof node !== 'object') return node;
  const s = node as Schema;
  if (s.format === 'int-or-string') {
    const { type: _t, format: _f, ...rest } = s;
    return { ...rest, anyOf: [{ type: 'string' }, { type: 'integer' }] };
  }
  const out: Schema = {};
  for (const [k, v] of Object.entries(s)) out[k] = k === 'properties' ? mapValues(v as Schema) : convert(v);
  if (out.properties && out.additionalProperties === undefined) out.additionalProperties = false;
  return out;
}

const mapValues = (o: Schema): Schema =>
  Object.fromEntries(Object.entries(o).map(([k, v]) => [k, convert(v)]));

/** Names of the definitions `name` reaches through $ref, itself included. */
function closure(defs: Record<string, Schema>, name: string): Set<string> {
  const seen = new Set<string>();
  const visit = (n: string) => {
    if (seen.has(n)) return;
    seen.add(n);
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === 'object')
        for (const [k, child] of Object.entries(v)) {
          if (k === '$ref' && typeof child === 'string' && child.startsWith(REF_PREFIX))
            visit(child.slice(REF_PREFIX.length));
          else walk(child);
        }
    };
    walk(defs[n]);
  };
  visit(name);
  return seen;
}

/**
 * Writes `<dir>/<group-or-v1>/<version>/<kind>.json` for every kind the server serves, to be
 * used with `-schema-location '<dir>/{{ .Group }}/{{ .ResourceAPIVersion }}/{{ .ResourceKind }}.json'`.
 * Only the kinds listed are written (the full set is hundreds of megabytes). Returns the template.
 */
export function writeKubeconformSchemas(
  swagger: unknown,
  dir: string,
  kinds: readonly { apiVersion: string; kind: string }[],
): string {
  const defs = swaggerDoc.parse(swagger).definitions as Record<string, Schema>;
  const converted: Record<string, Schema> = {};
  for (const [name, def] of Object.entries(defs))
    converted[name] =
      name === QUANTITY
        ? { description: def.description, anyOf: [{ type: 'string' }, { type: 'number' }] }
        : (convert(def) as Schema);
  const byGvk = new Map<string, string>();
  for (const [name, def] of Object.entries(defs))
    for (const g of (def['x-kubernetes-group-version-kind'] ?? []) as z.infer<typeof gvk>[])
      byGvk.set(`${g.group ? `${g.group}/` : ''}${g.version}/${g.kind}`, name);

  for (const { apiVersion, kind } of kinds) {
    const name = byGvk.get(`${apiVersion}/${kind}`);
    if (!name) throw new Error(`the API server serves no ${apiVersion} ${kind}`);
    const [group, version] = apiVersion.includes('/') ? apiVersion.split('/') : [apiVersion, apiVersion];
    const definitions = Object.fromEntries([...closure(converted, name)].map((n) => [n, converted[n]]));
    const schema = { ...converted[name], definitions };
    const target = join(dir, group ?? '', version ?? '');
    mkdirSync(target, { recursive: true });
    writeFileSync(join(target, `${kind.toLowerCase()}.json`), JSON.stringify(schema));
  }
  return join(dir, '{{ .Group }}/{{ .ResourceAPIVersion }}/{{ .ResourceKind }}.json');
}
