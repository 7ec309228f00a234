import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The import graph of the repository's TypeScript, read from the source text: static imports and
 * re-exports (`import type` and `export type` too), side-effect imports and `import('...')` (a dynamic
 * import or a type reference). Only edges between our own files count; packages and `node:` are left out.
 */

export interface Edge {
  from: string;
  to: string;
  /** Nothing but types crosses it (`import type`, `export type`, every specifier `type X`). */
  typeOnly: boolean;
}

export interface ImportGraph {
  files: string[];
  edges: Edge[];
  /** Specifiers of our own (relative or `#...`) that point at no file: a misread or a broken import. */
  unresolved: { file: string; specifier: string }[];
}

const KEYWORDS_BEFORE_REGEX = new Set([
  'return',
  'typeof',
  'case',
  'do',
  'else',
  'in',
  'of',
  'new',
  'delete',
  'void',
  'throw',
  'yield',
  'await',
  'instanceof',
]);

/**
 * The text with every comment blanked out (newlines kept), so the word `import` in a comment is
 * never read as one. Strings, template literals and regular expression literals are stepped over
 * whole, so a `//` or a quote inside them neither opens a comment nor a string.
 */
export function stripComments(src: string): string {
  const out: string[] = [];
  let i = 0;
  // The last significant character and word outside comments: whether a `/` starts a regex.
  let last = '';
  let word = '';
  const braces: number[] = []; // open `{` count inside each enclosing template's `${`
  const blank = (s: string) => s.replace(/[^\n]/g, ' ');
  while (i < src.length) {
    const c = src[i]!;
    const next = src[i + 1];
    if (c === '/' && next === '/') {
      const end = src.indexOf('\n', i);
      const stop = end === -1 ? src.length : end;
      out.push(blank(src.slice(i, stop)));
      i = stop;
      continue;
    }
    if (c === '/' && next === '*') {
      const end = src.indexOf('*/', i + 2);
      const stop = end === -1 ? src.length : end + 2;
      out.push(blank(src.slice(i, stop)));
      i = stop;
      continue;
    }
    if (c === "'" || c === '"') {
      let j = i + 1;
      while (j < src.length && src[j] !== c && src[j] !== '\n') j += src[j] === '\\' ? 2 : 1;
      out.push(src.slice(i, j + 1));
      i = j + 1;
      last = c;
      word = '';
      continue;
    }
    if (c === '`' || (c === '}' && braces.length > 0 && braces.at(-1) === 0)) {
      // A template literal, or its continuation after a `${...}`.
      if (c === '}') braces.pop();
      let j = i + 1;
      while (j < src.length && src[j] !== '`' && !(src[j] === '$' && src[j + 1] === '{')) {
        j += src[j] === '\\' ? 2 : 1;
      }
      if (src[j] === '$') {
        braces.push(0);
        j += 1;
      }
      out.push(src.slice(i, j + 1));
      i = j + 1;
      last = '`';
      word = '';
      continue;
    }
    if (
      c === '/' &&
      (last === '' || '(,=:[!&|?{};+-*%<>~^'.includes(last) || KEYWORDS_BEFORE_REGEX.has(word))
    ) {
      let j = i + 1;
      let inClass = false;
      while (j < src.length && src[j] !== '\n' && (inClass || src[j] !== '/')) {
        if (src[j] === '\\') j += 1;
        else if (src[j] === '[') inClass = true;
        else if (src[j] === ']') inClass = false;
        j += 1;
      }
      out.push(src.slice(i, j + 1));
      i = j + 1;
      last = '/';
      word = '';
      continue;
    }
    if (braces.length > 0) {
      if (c === '{') braces[braces.length - 1]! += 1;
      else if (c === '}') braces[braces.length - 1]! -= 1;
    }
    out.push(c);
    i += 1;
    if (/[A-Za-z0-9_$]/.test(c)) {
      word = /[A-Za-z0-9_$]/.test(last) ? word + c : c;
      last = c;
    } else if (!/\s/.test(c)) {
      last = c;
      word = '';
    }
  }
  return out.join('');
}

export interface ImportRef {
  specifier: string;
  typeOnly: boolean;
}

/** A static import or re-export: `import|export [type] ... from '...'`, at the start of a statement. */
const FROM = /(?:^|[\n;{}])\s*(import|export)\s+(type\s+)?([^;'"`]*?)\bfrom\s*(['"])([^'"\n]+)\4/g;
/** `import '...'`, for its effects. */
const BARE = /(?:^|[\n;{}])\s*import\s*(['"])([^'"\n]+)\1/g;
/** `import('...')`: a dynamic import, or a type reference `import('...').Name`. */
const DYNAMIC = /(?<![.\w$])import\s*\(\s*(['"])([^'"\n]+)\1\s*\)/g;

/** The `{ ... }` list of a clause whose every specifier is `type X`. */
const allTypes = (clause: string): boolean => {
  const m = /^\{([^}]*)\}$/.exec(clause.trim());
  if (!m) return false;
  const names = m[1]!
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return names.length > 0 && names.every((n) => n.startsWith('type '));
};

/** Every module a source text names. A dynamic import counts as a value edge unless it sits in a type. */
export function importsOf(src: string): ImportRef[] {
  const text = stripComments(src);
  const refs: ImportRef[] = [];
  for (const m of text.matchAll(FROM)) {
    refs.push({ specifier: m[5]!, typeOnly: m[2] !== undefined || allTypes(m[3]!) });
  }
  for (const m of text.matchAll(BARE)) refs.push({ specifier: m[2]!, typeOnly: false });
  for (const m of text.matchAll(DYNAMIC)) {
    const before = text.slice(Math.max(0, m.index - 7), m.index);
    refs.push({
      specifier: m[2]!,
      typeOnly: /typeof\s*$/.test(before) || /^\)\s*\.\s*[A-Z]/.test(text.slice(m.index + m[0].length - 1)),
    });
  }
  return refs;
}

/** package.json `imports`: exact keys, and `prefix*suffix` patterns. */
export function aliasResolver(root: string): (specifier: string) => string | undefined {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    imports?: Record<string, string>;
  };
  const entries = Object.entries(pkg.imports ?? {});
  return (specifier) => {
    for (const [key, target] of entries) {
      const star = key.indexOf('*');
      if (star === -1) {
        if (key === specifier) return resolve(root, target);
        continue;
      }
      const prefix = key.slice(0, star);
      const suffix = key.slice(star + 1);
      if (specifier.startsWith(prefix) && specifier.endsWith(suffix) && specifier.length >= key.length - 1) {
        const middle = specifier.slice(prefix.length, specifier.length - suffix.length);
        return resolve(root, target.replace('*', middle));
      }
    }
    return undefined;
  };
}

function asFile(path: string): string | undefined {
  for (const p of [path, `${path}.ts`, join(path, 'index.ts')]) {
    if (existsSync(p) && statSync(p).isFile()) return p;
  }
  return undefined;
}

function tsFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => join(e.parentPath, e.name));
}

/** The graph of every .ts file under `dirs` (relative to `root`); nodes are paths relative to `root`. */
export function buildImportGraph(root: string, dirs: readonly string[]): ImportGraph {
  const alias = aliasResolver(root);
  const files = dirs.flatMap((d) => tsFiles(join(root, d))).sort();
  const edges: Edge[] = [];
  const unresolved: ImportGraph['unresolved'] = [];
  const seen = new Map<string, Edge>();
  for (const file of files) {
    const from = relative(root, file);
    for (const ref of importsOf(readFileSync(file, 'utf8'))) {
      const s = ref.specifier;
      let target: string | undefined;
      if (s.startsWith('.')) target = resolve(dirname(file), s);
      else if (s.startsWith('#')) target = alias(s);
      else continue;
      const found = target && asFile(target);
      if (!found) {
        unresolved.push({ file: from, specifier: s });
        continue;
      }
      const to = relative(root, found);
      const key = `${from}\0${to}`;
      const known = seen.get(key);
      if (known) known.typeOnly &&= ref.typeOnly;
      else {
        const edge = { from, to, typeOnly: ref.typeOnly };
        seen.set(key, edge);
        edges.push(edge);
      }
    }
  }
  return { files: files.map((f) => relative(root, f)), edges, unresolved };
}

/** Tarjan's strongly connected components: those of more than one node, or one that imports itself. */
export function cyclesOf(edges: readonly { from: string; to: string }[]): string[][] {
  const out = new Map<string, string[]>();
  for (const { from, to } of edges) {
    if (!out.has(to)) out.set(to, []);
    (out.get(from) ?? out.set(from, []).get(from)!).push(to);
  }
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  let counter = 0;
  const visit = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter);
    counter += 1;
    stack.push(v);
    onStack.add(v);
    for (const w of out.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || out.get(v)!.includes(v)) components.push(component.sort());
  };
  for (const v of out.keys()) if (!index.has(v)) visit(v);
  return components;
}

/** One shortest loop through the component's first file, to show how a cycle closes. */
export function loopThrough(
  component: readonly string[],
  edges: readonly { from: string; to: string }[],
): string[] {
  const inside = new Set(component);
  const start = component[0]!;
  const prev = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const v = queue[i]!;
    for (const e of edges) {
      if (e.from !== v || !inside.has(e.to)) continue;
      if (e.to === start) {
        const path = [start];
        for (let u: string | undefined = v; u !== undefined && u !== start; u = prev.get(u))
          path.splice(1, 0, u);
        return [...path, start];
      }
      if (!prev.has(e.to)) {
        prev.set(e.to, v);
        queue.push(e.to);
      }
    }
  }
  return [start];
}
