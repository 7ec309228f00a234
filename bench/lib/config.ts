import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { connectRedis } from '#contract';
import { compileSnapshot, formatProblem, loadConfigFolder, SnapshotPublisher } from '#operator';

/**
 * The bench's config folder, in two variants of the same files: `stateful` as written in
 * bench/config (caps, limits, logs, usage, plus sessions, async and webhooks configured), and
 * `stateless`, the same objects with every `rateLimit` and every SpendCap removed, so the price of
 * state is the difference between two rows of one run.
 */
export type Variant = 'stateful' | 'stateless';

const SRC = resolve(import.meta.dirname, '../config');

function withoutState(yamlText: string): string {
  const kept: string[] = [];
  for (const doc of parseAllDocuments(yamlText)) {
    const obj = doc.toJS() as { kind?: string; spec?: Record<string, unknown> } | null;
    if (!obj || obj.kind === 'SpendCap') continue;
    if (obj.spec) delete obj.spec.rateLimit;
    kept.push(stringify(obj));
  }
  return kept.join('---\n');
}

/** Writes bench/config (variant applied) plus `extra` YAML into a new temp folder. */
export function writeConfig(variant: Variant, simulatorUrl: string, extra: string): string {
  const dir = mkdtempSync(join(tmpdir(), `switchyard-bench-${variant}-`));
  const files = readdirSync(SRC).filter((f) => f.endsWith('.yaml'));
  const all = [
    ...files.map((f) => [f, readFileSync(join(SRC, f), 'utf8')] as const),
    ['50-generated.yaml', extra] as const,
  ];
  for (const [name, text] of all) {
    const filled = text.replaceAll('BENCH_SIMULATOR_URL', `${simulatorUrl}/v1`);
    writeFileSync(join(dir, name), variant === 'stateless' ? withoutState(filled) : filled);
  }
  return dir;
}

/**
 * Compiles the folder and publishes the snapshot to Redis with the operator's publisher, as the
 * operator does in a cluster; a gateway pod then loads and follows it. Every object must be ready.
 */
export async function publishConfig(redisUrl: string, dir: string, sealKey: Buffer): Promise<string> {
  const loaded = await loadConfigFolder(dir);
  const problems = loaded.problems.map(formatProblem);
  const { snapshot, verdicts } = compileSnapshot({
    objects: loaded.objects,
    secrets: loaded.secrets,
    now: new Date(),
    sealKey,
  });
  for (const v of verdicts)
    if (!v.ok) problems.push(`${v.ref.kind} ${v.ref.namespace}/${v.ref.name}: ${v.reason}: ${v.message}`);
  if (problems.length) throw new Error(`bench config ${dir}:\n${problems.join('\n')}`);
  const client = connectRedis({ url: redisUrl }, { lazyConnect: true, maxRetriesPerRequest: 2 });
  try {
    await client.connect();
    const r = await new SnapshotPublisher(client).publish(snapshot);
    return r.version;
  } finally {
    client.disconnect();
  }
}
