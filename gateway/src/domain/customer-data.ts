/** Values of the workflow's cache fields, keyed by path, e.g. `{"metadata.customer_id": "c-42"}`. */
export function customerData(
  fields: readonly string[],
  body: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const path of fields) {
    let v: unknown = body;
    for (const part of path.split('.')) {
      v =
        v !== null && typeof v === 'object' && !Array.isArray(v)
          ? (v as Record<string, unknown>)[part]
          : undefined;
      if (v === undefined) break;
    }
    if (v !== undefined) out[path] = v;
  }
  return out;
}
