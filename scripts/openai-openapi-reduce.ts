/**
 * Pins the part of OpenAI's published OpenAPI description the conformance suite validates against.
 * The full description is several megabytes; this keeps exactly the root schemas below and every
 * schema they reference, transitively, and records where the copy came from.
 *
 *   node scripts/openai-openapi-reduce.ts <openai-openapi git dir> [commit]
 *
 * writes test/conformance/openai-openapi/openapi.reduced.json.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The objects the gateway's compatible surface and Responses family answer with. */
export const ROOTS = [
  'CreateChatCompletionResponse',
  'CreateChatCompletionStreamResponse',
  'CreateCompletionResponse',
  'CreateEmbeddingResponse',
  'ListModelsResponse',
  'Model',
  'ErrorResponse',
  'Response',
  'ResponseStreamEvent',
  'ResponseItemList',
  'CompactResource',
  'ConversationItemList',
] as const;

const PREFIX = '#/components/schemas/';

function refsOf(node: unknown, into: Set<string>): void {
  if (Array.isArray(node)) {
    for (const item of node) refsOf(item, into);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && typeof value === 'string') {
      if (!value.startsWith(PREFIX)) throw new Error(`unexpected $ref ${value}`);
      into.add(value.slice(PREFIX.length));
    } else refsOf(value, into);
  }
}

function main(): void {
  const [gitDir, commitArg] = process.argv.slice(2);
  if (!gitDir) throw new Error('usage: openai-openapi-reduce.ts <git dir> [commit]');
  const git = (...args: string[]) =>
    execFileSync('git', ['-C', gitDir, ...args], { maxBuffer: 1 << 27 }).toString();
  const commit = git('rev-parse', commitArg ?? 'HEAD').trim();
  const date = git('show', '-s', '--format=%cI', commit).trim();
  const full = JSON.parse(git('show', `${commit}:openapi.json`)) as {
    openapi: string;
    info: { title: string; version: string };
    components: { schemas: Record<string, unknown> };
  };
  const all = full.components.schemas;
  const keep = new Set<string>();
  const queue: string[] = [...ROOTS];
  while (queue.length > 0) {
    const name = queue.pop() as string;
    if (keep.has(name)) continue;
    const schema = all[name];
    if (schema === undefined) throw new Error(`schema ${name} not in the description`);
    keep.add(name);
    const refs = new Set<string>();
    refsOf(schema, refs);
    queue.push(...refs);
  }
  const schemas = Object.fromEntries([...keep].sort().map((name) => [name, all[name]]));
  const reduced = {
    openapi: full.openapi,
    info: full.info,
    'x-source': {
      repository: 'https://github.com/openai/openai-openapi',
      file: 'openapi.json',
      commit,
      date,
      roots: ROOTS,
    },
    components: { schemas },
  };
  const out = join(
    import.meta.dirname,
    '..',
    'test',
    'conformance',
    'openai-openapi',
    'openapi.reduced.json',
  );
  writeFileSync(out, `${JSON.stringify(reduced, null, 2)}\n`);
  // The repo's formatter owns the layout, so a regenerated copy diffs only where the schemas changed.
  execFileSync(join(import.meta.dirname, '..', 'node_modules', '.bin', 'biome'), ['format', '--write', out]);
  console.log(`${keep.size} of ${Object.keys(all).length} schemas from ${commit} (${date}) -> ${out}`);
}

main();
