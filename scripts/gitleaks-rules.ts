/**
 * Regenerates gateway/src/guardrails/detect/gitleaks-rules.ts, the secret detector's rule set, from
 * gitleaks' default configuration (config/gitleaks.toml, MIT license, © Zachary Rice).
 *   node scripts/gitleaks-rules.ts [--toml <file>] [--ref <commit or tag>]
 * Without --toml it downloads the file at --ref from GitHub. Rules are kept when their regex
 * compiles on re2js with a bounded match length (a stream holds back that many characters); the
 * header of the generated file lists the ones left out and why.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { compilePattern, maxWidth } from '../gateway/src/guardrails/detect/re2.ts';

const root = join(import.meta.dirname, '..');
const { values } = parseArgs({
  options: { toml: { type: 'string' }, ref: { type: 'string', default: 'master' } },
});
const OUT = join(root, 'gateway/src/guardrails/detect/gitleaks-rules.ts');
/** Longest match a kept rule may have (UTF-16 units): bounds the stream hold-back window. */
const MAX_WIDTH = 512;
/** Too imprecise on prose and code: they flag ordinary assignments. */
const EXCLUDED: Record<string, string> = {
  'generic-api-key': 'generic assignment heuristic, too many false positives on prose and code',
  'private-key': 'replaced by the built-in PEM private-key matcher (secrets-long.ts)',
  jwt: 'replaced by the built-in JWT matcher, which decodes the header (secrets-long.ts)',
};

/**
 * Rewrites unbounded repetitions (`*`, `+`, `{n,}`) as bounded ones (`{0,cap}`, `{1,cap}`,
 * `{n,n+cap}`), leaving escapes and character classes alone: the match length becomes finite.
 */
export function boundRepeats(pattern: string, cap: number): string {
  let out = '';
  let i = 0;
  while (i < pattern.length) {
    const c = pattern[i]!;
    if (c === '\\') {
      out += pattern.slice(i, i + 2);
      i += 2;
    } else if (c === '[') {
      let j = i + 1;
      if (pattern[j] === '^') j++;
      if (pattern[j] === ']') j++;
      while (j < pattern.length && pattern[j] !== ']') {
        if (pattern[j] === '\\') j += 2;
        else if (pattern.startsWith('[:', j)) j = pattern.indexOf(':]', j) + 2;
        else j++;
      }
      out += pattern.slice(i, j + 1);
      i = j + 1;
    } else if ((c === '*' || c === '+') && !(c === '*' && out.endsWith('(?'))) {
      out += c === '*' ? `{0,${cap}}` : `{1,${cap}}`;
      i++;
    } else if (c === '{') {
      const m = /^\{(\d+),\}/.exec(pattern.slice(i));
      if (m) {
        out += `{${m[1]},${Number(m[1]) + cap}}`;
        i += m[0].length;
      } else {
        out += c;
        i++;
      }
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

type Value = string | number | boolean | Value[];

/** Just enough TOML for gitleaks.toml: strings (all four kinds), numbers, booleans, arrays. */
function parseValue(src: string, i: number): [Value, number] {
  const skip = (k: number): number => {
    while (k < src.length) {
      if (/\s|,/.test(src[k]!)) k++;
      else if (src[k] === '#') while (k < src.length && src[k] !== '\n') k++;
      else break;
    }
    return k;
  };
  i = skip(i);
  if (src.startsWith("'''", i)) {
    const end = src.indexOf("'''", i + 3);
    return [src.slice(i + 3, end).replace(/^\n/, ''), end + 3];
  }
  if (src[i] === "'") {
    const end = src.indexOf("'", i + 1);
    return [src.slice(i + 1, end), end + 1];
  }
  if (src[i] === '"') {
    let k = i + 1;
    while (src[k] !== '"') k += src[k] === '\\' ? 2 : 1;
    return [JSON.parse(src.slice(i, k + 1)) as string, k + 1];
  }
  if (src[i] === '[') {
    const items: Value[] = [];
    let k = skip(i + 1);
    while (src[k] !== ']') {
      const [v, next] = parseValue(src, k);
      items.push(v);
      k = skip(next);
    }
    return [items, k + 1];
  }
  const m = /^[^\s,\]]+/.exec(src.slice(i))![0];
  return [m === 'true' ? true : m === 'false' ? false : Number(m), i + m.length];
}

type Table = Record<string, Value>;
interface Section {
  header: string;
  table: Table;
}

function parseToml(src: string): Section[] {
  const sections: Section[] = [{ header: '', table: {} }];
  let i = 0;
  while (i < src.length) {
    const line = src.slice(i, src.indexOf('\n', i) === -1 ? src.length : src.indexOf('\n', i));
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) {
      i += line.length + 1;
    } else if (trimmed.startsWith('[')) {
      sections.push({ header: trimmed, table: {} });
      i += line.length + 1;
    } else {
      const eq = src.indexOf('=', i);
      const key = src.slice(i, eq).trim();
      const [value, next] = parseValue(src, eq + 1);
      sections.at(-1)!.table[key] = value;
      i = src.indexOf('\n', next) === -1 ? src.length : src.indexOf('\n', next) + 1;
    }
  }
  return sections;
}

const strings = (v: Value | undefined): string[] => (Array.isArray(v) ? v.map(String) : []);

interface Allow {
  target: 'secret' | 'match';
  regexes: string[];
  stopwords: string[];
}
interface Rule {
  id: string;
  regex: string;
  keywords: string[];
  width: number;
  entropy?: number;
  secretGroup?: number;
  allow: Allow[];
}

const source = values.toml
  ? readFileSync(values.toml, 'utf8')
  : await (async () => {
      const url = `https://raw.githubusercontent.com/gitleaks/gitleaks/${values.ref}/config/gitleaks.toml`;
      const res = await fetch(url);
      if (!res.ok) throw new Error(`${url}: ${res.status}`);
      return res.text();
    })();

const sections = parseToml(source);
const rules: Rule[] = [];
const skipped: string[] = [];
const bounded: string[] = [];
let global: Allow = { target: 'secret', regexes: [], stopwords: [] };
for (const s of sections) {
  if (s.header === '[allowlist]')
    global = { target: 'secret', regexes: strings(s.table.regexes), stopwords: strings(s.table.stopwords) };
  else if (s.header === '[[rules]]') {
    const id = String(s.table.id);
    const regex = s.table.regex;
    if (typeof regex !== 'string') {
      skipped.push(`${id}: matches file paths only`);
      continue;
    }
    if (EXCLUDED[id]) {
      skipped.push(`${id}: ${EXCLUDED[id]}`);
      continue;
    }
    let width: number;
    let pattern = regex;
    try {
      width = maxWidth(compilePattern(regex));
    } catch (err) {
      skipped.push(`${id}: does not compile on re2js (${(err as Error).message})`);
      continue;
    }
    try {
      // Unbounded or too long: cap the repetitions, as loosely as the width limit allows.
      for (const cap of [256, 128, 64, 32]) {
        if (width <= MAX_WIDTH) break;
        pattern = boundRepeats(regex, cap);
        width = maxWidth(compilePattern(pattern));
        if (width <= MAX_WIDTH) bounded.push(`${id}: repetitions capped at ${cap} (longest match ${width})`);
      }
    } catch (err) {
      skipped.push(`${id}: unbounded, and its bounded form exceeds RE2's limits (${(err as Error).message})`);
      continue;
    }
    if (width > MAX_WIDTH) {
      skipped.push(`${id}: match length ${Number.isFinite(width) ? width : 'unbounded'} over ${MAX_WIDTH}`);
      continue;
    }
    const rule: Rule = {
      id,
      regex: pattern,
      keywords: strings(s.table.keywords).map((k) => k.toLowerCase()),
      width,
      allow: [],
    };
    if (typeof s.table.entropy === 'number') rule.entropy = s.table.entropy;
    if (typeof s.table.secretGroup === 'number') rule.secretGroup = s.table.secretGroup;
    rules.push(rule);
  } else if (s.header === '[[rules.allowlists]]') {
    const rule = rules.at(-1);
    const t = s.table;
    // Path and line conditions cannot hold on a prompt: an AND with them never allows, an OR drops them.
    if (!rule || (t.condition === 'AND' && (t.paths || t.regexTarget === 'line')) || t.regexTarget === 'line')
      continue;
    rule.allow.push({
      target: t.regexTarget === 'match' ? 'match' : 'secret',
      regexes: strings(t.regexes),
      stopwords: strings(t.stopwords).map((w) => w.toLowerCase()),
    });
  }
}

const ref = `ref ${values.ref}${values.toml ? ', read from a local copy' : ''}`;
const lines = [
  '// biome-ignore-all format: generated data, one rule per line',
  '// biome-ignore-all lint/suspicious/noTemplateCurlyInString: regular expressions, not templates',
  '/**',
  ' * GENERATED by scripts/gitleaks-rules.ts: do not edit; rerun the script.',
  ` * Source: gitleaks' default rules, github.com/gitleaks/gitleaks config/gitleaks.toml, ${ref}.`,
  ' * License of the source: MIT, Copyright (c) 2019 Zachary Rice. Patterns are Go RE2 syntax and run',
  ' * on re2js. Left out:',
  ...skipped.map((s) => ` *   ${s}`),
  ' * Bounded (so a stream can hold back the longest match):',
  ...bounded.map((s) => ` *   ${s}`),
  ' */',
  "import type { GitleaksAllow, GitleaksRule } from './secret-rule.ts';",
  '',
  `export const GITLEAKS_GLOBAL_ALLOW: GitleaksAllow = ${JSON.stringify(global)};`,
  '',
  'export const GITLEAKS_RULES: readonly GitleaksRule[] = [',
  ...rules.map((r) => `  ${JSON.stringify(r)},`),
  '];',
  '',
];
writeFileSync(OUT, lines.join('\n'));
process.stdout.write(`${rules.length} rules written to ${OUT}; ${skipped.length} left out\n`);
