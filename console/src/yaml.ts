/**
 * A JSON value as YAML, for the workflow form's YAML view and export. Strings other than plain words
 * are written as JSON strings (valid YAML double-quoted scalars), so no value can change the
 * document's structure.
 * Small on purpose: the console's first load has a budget, and a YAML library is most of it.
 */
const isPlain = (k: string) => /^[A-Za-z_][A-Za-z0-9_.-]*$/.test(k);
const keyOf = (k: string) => (isPlain(k) ? k : JSON.stringify(k));
const RESERVED = /^(true|false|null|yes|no|on|off|y|n|~)$/i;
/** A word YAML reads as that same string (no number, boolean, null or syntax), written bare. */
const bare = (s: string) => /^[A-Za-z][A-Za-z0-9._/-]*$/.test(s) && !RESERVED.test(s);
const scalar = (v: unknown): string =>
  typeof v === 'string' ? (bare(v) ? v : JSON.stringify(v)) : String(v ?? 'null');

function lines(v: unknown, indent: string): string[] {
  if (Array.isArray(v)) {
    if (v.length === 0) return [`${indent}[]`];
    return v.flatMap((item) => {
      const inner = lines(item, `${indent}  `);
      if (typeof item !== 'object' || item === null || inner[0]?.trimStart().startsWith('['))
        return [`${indent}- ${scalar(item)}`];
      return [`${indent}- ${inner[0]!.trimStart()}`, ...inner.slice(1)];
    });
  }
  if (typeof v === 'object' && v !== null) {
    const entries = Object.entries(v).filter(([, x]) => x !== undefined);
    if (entries.length === 0) return [`${indent}{}`];
    return entries.flatMap(([k, x]) => {
      const empty =
        (Array.isArray(x) && x.length === 0) ||
        (typeof x === 'object' && x !== null && Object.keys(x).length === 0);
      if (typeof x !== 'object' || x === null || empty)
        return [`${indent}${keyOf(k)}: ${empty ? (Array.isArray(x) ? '[]' : '{}') : scalar(x)}`];
      return [`${indent}${keyOf(k)}:`, ...lines(x, `${indent}  `)];
    });
  }
  return [`${indent}${scalar(v)}`];
}

export const toYaml = (v: unknown): string => `${lines(v, '').join('\n')}\n`;
