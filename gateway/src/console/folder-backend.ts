import { randomBytes } from 'node:crypto';
import { rename, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { compileSnapshot, loadConfigFolder, type Verdict, type Workflow, workflowSchema } from '#operator';
import { GatewayError } from '../errors/index.ts';
import {
  type ConsoleBackend,
  type ConsoleProject,
  MANAGED_BY_CONSOLE,
  MANAGED_BY_LABEL,
  type ReadyVerdict,
  type WorkflowRecord,
  WorkflowRefusedError,
  type WorkflowSpec,
  type WriteResult,
} from './backend.ts';
import { specPathOf, specPathOfVerdict } from './fields.ts';
import { consoleFileName, objectNameFor } from './names.ts';

export interface FolderConsoleOptions {
  /** The config folder embedded mode serves. */
  dir: string;
  /** Recompiles the folder and installs the snapshot (embedded mode's reload); returns the verdicts. */
  reload: () => Promise<{ verdicts: readonly Verdict[] }>;
  now?: () => Date;
}

const API_VERSION = 'switchyard.dev/v1alpha1';

const verdictOf = (verdicts: readonly Verdict[], namespace: string, name: string): ReadyVerdict => {
  const v = verdicts.find(
    (x) => x.ref.kind === 'Workflow' && x.ref.namespace === namespace && x.ref.name === name,
  );
  if (!v) return { status: 'Unknown', reason: 'Pending', message: 'not compiled yet' };
  return { status: v.ok ? 'True' : 'False', reason: v.reason, message: v.message };
};

const apiNameOf = (w: Workflow): string => w.spec.name ?? w.metadata.name;

const exists = (file: string): Promise<boolean> =>
  stat(file).then(
    () => true,
    () => false,
  );

/**
 * Embedded mode: one YAML file per console workflow in the config folder (console-<ns>.<name>.yaml),
 * which is what the hot reload serves. A write is compiled in memory with the rest of the folder
 * first; only a spec the schema and the compiler accept reaches the folder, then the folder is
 * reloaded and its verdict answered. Hand-written files are never touched (409 for their workflows).
 */
export class FolderConsoleBackend implements ConsoleBackend {
  readonly mode = 'folder';
  readonly #o: FolderConsoleOptions;
  readonly #now: () => Date;
  /** Only checks and compiles; the snapshot built with it is never installed. */
  readonly #dryKey = randomBytes(32);
  /** Writes run one at a time: check-then-write must not interleave. */
  #queue: Promise<unknown> = Promise.resolve();

  constructor(o: FolderConsoleOptions) {
    this.#o = o;
    this.#now = o.now ?? (() => new Date());
  }

  async list(p: ConsoleProject): Promise<WorkflowRecord[]> {
    const { workflows, verdicts } = await this.#read(p);
    const records = await Promise.all(workflows.map((w) => this.#record(w, verdicts)));
    return records.sort((a, b) => a.name.localeCompare(b.name));
  }

  async get(p: ConsoleProject, name: string): Promise<WorkflowRecord | undefined> {
    const { workflows, verdicts } = await this.#read(p);
    const w = workflows.find((x) => apiNameOf(x) === name);
    return w && this.#record(w, verdicts);
  }

  create(p: ConsoleProject, spec: WorkflowSpec): Promise<WriteResult> {
    return this.#serial(async () => {
      const { workflows, loaded } = await this.#read(p);
      if (workflows.some((w) => apiNameOf(w) === spec.name))
        throw new GatewayError('conflict', `Workflow "${spec.name}" already exists in project ${p.id}.`, {
          param: 'name',
          hint: 'Replace it with PUT, or pick another name.',
        });
      const objectName = objectNameFor(p.name, spec.name);
      // A create never replaces an object it did not find as this project's workflow (another
      // project's, or a hand-written one): the API server's AlreadyExists, in folder form.
      const taken = loaded.objects.some(
        (o) =>
          o.kind === 'Workflow' && o.metadata.namespace === p.namespace && o.metadata.name === objectName,
      );
      if (taken || (await exists(this.#file(p.namespace, objectName))))
        throw new GatewayError(
          'conflict',
          `Workflow "${spec.name}" cannot be created: its object name ${objectName} is taken by another workflow in namespace ${p.namespace}.`,
          { param: 'name', hint: 'Pick another name.' },
        );
      return this.#write(p, objectName, spec);
    });
  }

  replace(p: ConsoleProject, spec: WorkflowSpec): Promise<WriteResult> {
    return this.#serial(async () => {
      const current = await this.#ownedOrThrow(p, spec.name);
      return this.#write(p, current.metadata.name, spec);
    });
  }

  delete(p: ConsoleProject, name: string): Promise<void> {
    return this.#serial(async () => {
      const current = await this.#ownedOrThrow(p, name);
      await unlink(this.#file(p.namespace, current.metadata.name));
      await this.#o.reload();
    });
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(fn, fn);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  #file(namespace: string, objectName: string): string {
    return join(this.#o.dir, consoleFileName(namespace, objectName));
  }

  /** The folder as the loader reads it, compiled: the project's workflows and every verdict. */
  async #read(p: ConsoleProject) {
    const loaded = await loadConfigFolder(this.#o.dir);
    const { verdicts } = compileSnapshot({
      objects: loaded.objects,
      secrets: loaded.secrets,
      now: this.#now(),
      sealKey: this.#dryKey,
    });
    const workflows = loaded.objects.filter(
      (o): o is Workflow =>
        o.kind === 'Workflow' && o.metadata.namespace === p.namespace && o.spec.projectRef.name === p.name,
    );
    return { loaded, workflows, verdicts };
  }

  /** Console-managed: the label, and the console's own file (a label alone in hand-written YAML is not enough). */
  async #managed(w: Workflow): Promise<boolean> {
    if (w.metadata.labels?.[MANAGED_BY_LABEL] !== MANAGED_BY_CONSOLE) return false;
    return stat(this.#file(w.metadata.namespace, w.metadata.name)).then(
      () => true,
      () => false,
    );
  }

  async #record(w: Workflow, verdicts: readonly Verdict[]): Promise<WorkflowRecord> {
    return {
      name: apiNameOf(w),
      spec: w.spec,
      namespace: w.metadata.namespace,
      objectName: w.metadata.name,
      managed: await this.#managed(w),
      ready: verdictOf(verdicts, w.metadata.namespace, w.metadata.name),
    };
  }

  async #ownedOrThrow(p: ConsoleProject, name: string): Promise<Workflow> {
    const { workflows } = await this.#read(p);
    const w = workflows.find((x) => apiNameOf(x) === name);
    if (!w) throw new GatewayError('workflow_not_found', `Workflow "${name}" not found in project ${p.id}.`);
    if (!(await this.#managed(w)))
      throw new GatewayError(
        'conflict',
        `Workflow "${name}" is not managed by the console (it is defined in a hand-written file of the config folder).`,
        { hint: 'Edit it in its YAML file.' },
      );
    return w;
  }

  async #write(p: ConsoleProject, objectName: string, spec: WorkflowSpec): Promise<WriteResult> {
    const manifest = {
      apiVersion: API_VERSION,
      kind: 'Workflow',
      metadata: {
        name: objectName,
        namespace: p.namespace,
        labels: { [MANAGED_BY_LABEL]: MANAGED_BY_CONSOLE },
      },
      spec,
    };
    // The schema first (what the API server would refuse), then the compiler with the rest of the folder.
    const parsed = workflowSchema.safeParse({
      ...manifest,
      metadata: { ...manifest.metadata, generation: 1, creationTimestamp: this.#now().toISOString() },
    });
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const path = issue?.path ?? [];
      const specPath =
        path[0] === 'spec' ? specPathOf(path.slice(1)) : path[0] === 'metadata' ? 'name' : undefined;
      throw new WorkflowRefusedError(
        'Invalid',
        `${specPath ?? 'spec'}: ${issue?.message ?? 'invalid'}`,
        specPath,
      );
    }
    const { loaded } = await this.#read(p);
    const others = loaded.objects.filter(
      (o) =>
        !(o.kind === 'Workflow' && o.metadata.namespace === p.namespace && o.metadata.name === objectName),
    );
    const dry = compileSnapshot({
      objects: [...others, parsed.data],
      secrets: loaded.secrets,
      now: this.#now(),
      sealKey: this.#dryKey,
    });
    const verdict = verdictOf(dry.verdicts, p.namespace, objectName);
    if (verdict.status === 'False')
      throw new WorkflowRefusedError(
        verdict.reason,
        verdict.message,
        specPathOfVerdict(verdict.reason, verdict.message),
      );
    // Written under a name the loader skips, then renamed: the reload never reads half a file.
    const file = this.#file(p.namespace, objectName);
    await writeFile(`${file}.tmp`, stringify(manifest));
    await rename(`${file}.tmp`, file);
    const { verdicts } = await this.#o.reload();
    return {
      record: {
        name: spec.name,
        spec: parsed.data.spec,
        namespace: p.namespace,
        objectName,
        managed: true,
        ready: verdictOf(verdicts, p.namespace, objectName),
      },
      settled: true,
    };
  }
}
