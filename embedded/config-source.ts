import { watch } from 'node:fs';
import type { Logger } from 'pino';
import { compileSnapshot, formatProblem, type LoadedConfig, loadConfigFolder, type Verdict } from '#operator';
import type { EmbeddedDemoServers } from './demo-servers.ts';

/** Where a compiled snapshot goes: the in-process store, or Redis (which the gateway then follows). */
export interface SnapshotSink {
  install(snapshot: unknown): unknown;
}

export interface CompiledFolder {
  loaded: LoadedConfig;
  verdicts: Verdict[];
  version: string;
}

/**
 * Embedded mode's stand-in for the operator: read the CR folder, compile, install. Bad files and
 * invalid objects are reported and skipped; the rest is served.
 */
export async function loadInto(
  dir: string,
  sink: SnapshotSink,
  sealKey: Buffer,
  logger: Logger,
  /** Serves annotated MCPServers with the built-in demo server (embedded mode's own). */
  demo?: EmbeddedDemoServers,
): Promise<CompiledFolder> {
  const loaded = await loadConfigFolder(dir);
  if (demo) loaded.objects = await demo.apply(loaded.objects);
  for (const p of loaded.problems)
    logger.warn({ msg: `config: ${formatProblem(p)}`, file: p.file, object: p.object, field: p.field });
  const { snapshot, verdicts } = compileSnapshot({
    objects: loaded.objects,
    secrets: loaded.secrets,
    now: new Date(),
    sealKey,
  });
  for (const v of verdicts)
    if (!v.ok)
      logger.warn({
        msg: `config: ${v.ref.kind} ${v.ref.namespace}/${v.ref.name} is not ready: ${v.reason}: ${v.message}`,
        reason: v.reason,
      });
  await sink.install(snapshot);
  return { loaded, verdicts, version: snapshot.version };
}

/** Recompiles when a file in the folder changes, so editing YAML takes effect without a restart. */
export function watchFolder(dir: string, reload: () => Promise<unknown>, logger: Logger): () => void {
  let timer: NodeJS.Timeout | undefined;
  try {
    const watcher = watch(dir, { recursive: true }, () => {
      clearTimeout(timer);
      timer = setTimeout(() => {
        reload().catch((err: unknown) => logger.error({ msg: 'config reload failed', err }));
      }, 200);
    });
    return () => {
      clearTimeout(timer);
      watcher.close();
    };
  } catch (err) {
    logger.warn({ msg: 'cannot watch the config folder; restart to apply changes', err });
    return () => {};
  }
}
