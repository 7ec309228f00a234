import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { z } from 'zod';
import { API_VERSION, type SwitchyardObject, switchyardObject } from '../resources/index.ts';
import { decodeSecret, type SecretData, secret } from '../resources/secret.ts';

/** One thing wrong with one file or object, precise enough to fix without guessing. */
export interface LoadProblem {
  file: string;
  object?: string;
  field?: string;
  message: string;
}

export interface LoadedConfig {
  objects: SwitchyardObject[];
  secrets: SecretData[];
  problems: LoadProblem[];
  files: number;
}

/** Kinds in a config folder that are understood but not compiled (kubectl apply needs them). */
const PASSTHROUGH_KINDS = new Set(['Namespace']);

async function listYaml(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...(await listYaml(path)));
    else if (/\.(ya?ml|json)$/.test(entry.name)) out.push(path);
  }
  return out.sort();
}

const fieldPath = (issue: z.core.$ZodIssue): string =>
  issue.path
    .map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`))
    .join('')
    .replace(/^\./, '');

function describe(doc: unknown, index: number): string {
  if (doc && typeof doc === 'object' && !Array.isArray(doc)) {
    const d = doc as { kind?: unknown; metadata?: { name?: unknown; namespace?: unknown } };
    const kind = typeof d.kind === 'string' ? d.kind : 'object';
    const name = typeof d.metadata?.name === 'string' ? d.metadata.name : `#${index + 1}`;
    const ns = typeof d.metadata?.namespace === 'string' ? `${d.metadata.namespace}/` : '';
    return `${kind} ${ns}${name}`;
  }
  return `document #${index + 1}`;
}

/**
 * Reads every YAML/JSON file below `dir` as Kubernetes manifests (multi-document files allowed).
 * Bad files and objects are reported and skipped; everything else is returned.
 */
export async function loadConfigFolder(dir: string): Promise<LoadedConfig> {
  const result: LoadedConfig = { objects: [], secrets: [], problems: [], files: 0 };
  // The API server keeps kind/namespace/name unique; a folder can repeat one, and the compiler would then
  // serve one copy while the other's verdict overwrites its status. The first definition counts.
  const seen = new Map<string, string>();
  const isFirst = (file: string, object: string, kind: string, meta: { namespace: string; name: string }) => {
    const id = `${kind} ${meta.namespace}/${meta.name}`;
    const first = seen.get(id);
    if (first === undefined) seen.set(id, file);
    else result.problems.push({ file, object, message: `${id} is already defined in ${first}; ignored` });
    return first === undefined;
  };
  let files: string[];
  try {
    files = await listYaml(dir);
  } catch (err) {
    result.problems.push({ file: dir, message: `cannot read config folder: ${(err as Error).message}` });
    return result;
  }
  for (const path of files) {
    const file = relative(process.cwd(), path) || path;
    result.files++;
    const [text, info] = await Promise.all([readFile(path, 'utf8'), stat(path)]);
    const docs = parseAllDocuments(text);
    const list = Array.isArray(docs) ? docs : [docs];
    list.forEach((doc, index) => {
      if (doc.errors.length) {
        const e = doc.errors[0]!;
        result.problems.push({
          file,
          object: `document #${index + 1}`,
          message: `invalid YAML: ${e.message.split('\n')[0]}`,
        });
        return;
      }
      const value: unknown = doc.toJS();
      if (value === null || value === undefined) return;
      const object = describe(value, index);
      if (typeof value !== 'object' || Array.isArray(value)) {
        result.problems.push({
          file,
          object,
          message: 'a manifest must be a mapping with apiVersion and kind',
        });
        return;
      }
      const v = value as { apiVersion?: unknown; kind?: unknown; metadata?: Record<string, unknown> };
      if (v.kind === 'Secret' && v.apiVersion === 'v1') {
        const parsed = secret.safeParse(v);
        if (!parsed.success)
          for (const issue of parsed.error.issues)
            result.problems.push({ file, object, field: fieldPath(issue), message: issue.message });
        else if (isFirst(file, object, 'Secret', parsed.data.metadata))
          result.secrets.push(decodeSecret(parsed.data));
        return;
      }
      if (typeof v.kind === 'string' && PASSTHROUGH_KINDS.has(v.kind)) return;
      if (v.apiVersion !== API_VERSION) {
        result.problems.push({
          file,
          object,
          field: 'apiVersion',
          message: `unknown kind ${String(v.apiVersion)}/${String(v.kind)}; expected ${API_VERSION} Project, Provider, Workflow, ApiKey, SpendCap, Guardrail or MCPServer, v1 Secret or Namespace`,
        });
        return;
      }
      // Embedded mode has no API server to stamp these; the file's age stands in for creation time.
      const metadata = { generation: 1, creationTimestamp: info.mtime.toISOString(), ...(v.metadata ?? {}) };
      const parsed = switchyardObject.safeParse({ ...v, metadata });
      if (!parsed.success)
        for (const issue of parsed.error.issues)
          result.problems.push({ file, object, field: fieldPath(issue), message: issue.message });
      else if (isFirst(file, object, parsed.data.kind, parsed.data.metadata))
        result.objects.push(parsed.data);
    });
  }
  return result;
}

export const formatProblem = (p: LoadProblem): string =>
  `${p.file}${p.object ? `: ${p.object}` : ''}${p.field ? `: field ${p.field}` : ''}: ${p.message}`;
