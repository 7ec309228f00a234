/**
 * Metric names referenced by PromQL expressions (alert rules, dashboard panels and variables) and
 * names exported by a /metrics page, so a test can hold the two against each other.
 */

/** Words that look like identifiers in PromQL but are not metric names. */
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'atan2', 'offset', 'inf', 'nan']);

/**
 * Every metric name an expression selects. Strings, label matchers, ranges and label lists of
 * by/without/on/ignoring/group_* are removed first; what remains is function names (followed by
 * `(`), keywords, numbers and metric names.
 */
export function metricNames(expr: string): Set<string> {
  const labelValues = /^\s*label_values\((.*),\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\)\s*$/s.exec(expr);
  let e = labelValues?.[1] ?? expr;
  e = e
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\boffset\s+-?[0-9a-z]+/g, ' ')
    .replace(/\$\{?\w+\}?/g, ' ')
    .replace(/\b[0-9][0-9.eE+-]*\b/g, ' ');
  const names = new Set<string>();
  for (const m of e.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const id = m[0];
    const rest = e.slice((m.index ?? 0) + id.length).trimStart();
    if (rest.startsWith('(') || KEYWORDS.has(id.toLowerCase())) continue;
    names.add(id);
  }
  return names;
}

/**
 * Series names a Prometheus text exposition offers: every sample's name, plus the names a family
 * declared by `# TYPE` produces even before it has a sample (a labelled counter or histogram that
 * has not been observed yet shows only its HELP and TYPE lines).
 */
export function exportedNames(exposition: string): Set<string> {
  const names = new Set<string>();
  for (const line of exposition.split('\n')) {
    const type = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (\w+)$/.exec(line);
    if (type) {
      const [, name = '', kind] = type;
      if (kind === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(name + s);
      else if (kind === 'summary') for (const s of ['', '_sum', '_count']) names.add(name + s);
      else names.add(name);
      continue;
    }
    const sample = /^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]/.exec(line);
    if (sample?.[1]) names.add(sample[1]);
  }
  return names;
}

/** The family a series name belongs to (histogram and summary suffixes removed). */
export const familyOf = (name: string, families: ReadonlySet<string>): string => {
  for (const suffix of ['_bucket', '_sum', '_count']) {
    const base = name.endsWith(suffix) ? name.slice(0, -suffix.length) : undefined;
    if (base && families.has(base)) return base;
  }
  return name;
};
