import type { Logger } from 'pino';
import {
  isNotFound,
  type KubeClient,
  KubeError,
  type KubeObject,
  type WatchEvent,
} from '#operator/kube/index';
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
import { specPathOfApiServerMessage, specPathOfVerdict } from './fields.ts';
import { objectNameFor } from './names.ts';
import { precheck } from './precheck.ts';

const API_VERSION = 'switchyard.dev/v1alpha1';
const collection = (ns: string): string =>
  `/apis/${API_VERSION}/namespaces/${encodeURIComponent(ns)}/workflows`;
const itemPath = (ns: string, name: string): string => `${collection(ns)}/${encodeURIComponent(name)}`;

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const specOf = (o: KubeObject): Record<string, unknown> => (isRecord(o.spec) ? o.spec : {});
export const apiNameOf = (o: KubeObject): string => {
  const n = specOf(o).name;
  return typeof n === 'string' ? n : o.metadata.name;
};
export const projectRefOf = (o: KubeObject): unknown => {
  const ref = specOf(o).projectRef;
  return isRecord(ref) ? ref.name : undefined;
};
const isManaged = (o: KubeObject): boolean => o.metadata.labels?.[MANAGED_BY_LABEL] === MANAGED_BY_CONSOLE;

/** The Ready condition when it judges the object's current generation; Unknown until then. */
function readyOf(o: KubeObject): ReadyVerdict {
  const status = isRecord(o.status) ? o.status : {};
  const list = Array.isArray(status.conditions) ? status.conditions : [];
  const c = list.find((x): x is Record<string, unknown> => isRecord(x) && x.type === 'Ready');
  const generation = o.metadata.generation ?? 0;
  const observed = typeof c?.observedGeneration === 'number' ? c.observedGeneration : -1;
  if (!c || observed < generation)
    return {
      status: 'Unknown',
      reason: 'Pending',
      message: `the operator has not compiled generation ${generation} yet`,
      ...(observed >= 0 ? { observedGeneration: observed } : {}),
    };
  const status3 = c.status === 'True' || c.status === 'False' ? c.status : 'Unknown';
  return {
    status: status3,
    reason: typeof c.reason === 'string' ? c.reason : 'Unknown',
    message: typeof c.message === 'string' ? c.message : '',
    observedGeneration: observed,
  };
}

export function toRecord(o: KubeObject): WorkflowRecord {
  return {
    name: apiNameOf(o),
    spec: specOf(o),
    namespace: o.metadata.namespace ?? '',
    objectName: o.metadata.name,
    managed: isManaged(o),
    ...(o.metadata.generation !== undefined ? { generation: o.metadata.generation } : {}),
    ...(o.metadata.resourceVersion !== undefined ? { resourceVersion: o.metadata.resourceVersion } : {}),
    ready: readyOf(o),
  };
}

/** The object for a PUT: its metadata (resourceVersion included) with a new spec; no status. */
function withSpec(o: KubeObject, spec: unknown): KubeObject {
  const { managedFields: _, ...metadata } = o.metadata;
  return { apiVersion: API_VERSION, kind: 'Workflow', metadata, spec };
}

/** The API server's own words, without the client's `POST /path: 422 Invalid: ` prefix. */
export const serverMessage = (err: KubeError): string => err.message.replace(/^\S+ \S+: \d+ \S+: /, '');

export interface KubeConsoleOptions {
  client: KubeClient;
  logger: Logger;
  /** How long a write waits for the operator's verdict before answering 202 (default 10 s). */
  settleTimeoutMs?: number;
}

/**
 * Workflows as CRs, written with the gateway's ServiceAccount (operator/rbac/gateway-*.yaml). A
 * write is checked against the project's snapshot first (./precheck.ts), then answered once the
 * operator's Ready condition judges the written generation (watched, not polled). The API server's
 * refusal is 422 with nothing written; the operator's refusal is undone, then answered 422.
 */
export class KubeConsoleBackend implements ConsoleBackend {
  readonly mode = 'kubernetes';
  readonly #client: KubeClient;
  readonly #logger: Logger;
  readonly #timeoutMs: number;

  constructor(o: KubeConsoleOptions) {
    this.#client = o.client;
    this.#logger = o.logger;
    this.#timeoutMs = o.settleTimeoutMs ?? 10_000;
  }

  async list(p: ConsoleProject): Promise<WorkflowRecord[]> {
    return (await this.#objects(p)).map(toRecord).sort((a, b) => a.name.localeCompare(b.name));
  }

  async get(p: ConsoleProject, name: string): Promise<WorkflowRecord | undefined> {
    const o = await this.#find(p, name);
    return o && toRecord(o);
  }

  async create(p: ConsoleProject, spec: WorkflowSpec): Promise<WriteResult> {
    if (await this.#find(p, spec.name))
      throw new GatewayError('conflict', `Workflow "${spec.name}" already exists in project ${p.id}.`, {
        param: 'name',
        hint: 'Replace it with PUT, or pick another name.',
      });
    const objectName = objectNameFor(p.name, spec.name);
    if (p.snapshot) precheck(p, p.snapshot, objectName, spec);
    const body = {
      apiVersion: API_VERSION,
      kind: 'Workflow',
      metadata: {
        name: objectName,
        namespace: p.namespace,
        labels: { [MANAGED_BY_LABEL]: MANAGED_BY_CONSOLE },
      },
      spec,
    };
    const created = await this.#write('POST', collection(p.namespace), body, spec.name);
    const settled = await this.#settle(created);
    if (settled.obj && settled.verdict.status === 'False') {
      await this.#undo('delete the refused workflow', () =>
        this.#client.request('DELETE', itemPath(p.namespace, created.metadata.name), {
          body: { preconditions: { uid: created.metadata.uid } },
        }),
      );
      throw refused(settled.verdict);
    }
    return { record: toRecord(settled.obj ?? created), settled: settled.verdict.status !== 'Unknown' };
  }

  async replace(p: ConsoleProject, spec: WorkflowSpec): Promise<WriteResult> {
    const current = await this.#ownedOrThrow(p, spec.name);
    if (p.snapshot) precheck(p, p.snapshot, current.metadata.name, spec);
    const path = itemPath(p.namespace, current.metadata.name);
    // The read resourceVersion goes along: a concurrent change makes this a 409, never a lost update.
    const written = await this.#write('PUT', path, withSpec(current, spec), spec.name);
    const settled = await this.#settle(written);
    if (settled.obj && settled.verdict.status === 'False') {
      const latest = settled.obj;
      await this.#undo('restore the previous spec', () =>
        this.#client.request('PUT', path, { body: withSpec(latest, current.spec) }),
      );
      throw refused(settled.verdict);
    }
    return { record: toRecord(settled.obj ?? written), settled: settled.verdict.status !== 'Unknown' };
  }

  async delete(p: ConsoleProject, name: string): Promise<void> {
    const current = await this.#ownedOrThrow(p, name);
    try {
      await this.#client.request('DELETE', itemPath(p.namespace, current.metadata.name), {
        body: { preconditions: { uid: current.metadata.uid } },
      });
    } catch (err) {
      if (isNotFound(err)) throw notFound(p, name);
      throw unavailable(err);
    }
  }

  async #objects(p: ConsoleProject): Promise<KubeObject[]> {
    try {
      const list: { items: KubeObject[] } = await this.#client.request('GET', collection(p.namespace));
      return list.items.filter((o) => projectRefOf(o) === p.name);
    } catch (err) {
      throw unavailable(err);
    }
  }

  async #find(p: ConsoleProject, name: string): Promise<KubeObject | undefined> {
    return (await this.#objects(p)).find((o) => apiNameOf(o) === name);
  }

  async #ownedOrThrow(p: ConsoleProject, name: string): Promise<KubeObject> {
    const o = await this.#find(p, name);
    if (!o) throw notFound(p, name);
    if (!isManaged(o))
      throw new GatewayError(
        'conflict',
        `Workflow "${name}" is not managed by the console (Workflow ${o.metadata.namespace}/${o.metadata.name} has no ${MANAGED_BY_LABEL}: ${MANAGED_BY_CONSOLE} label).`,
        { hint: 'Change it where it is defined (GitOps, kubectl), or label it for the console.' },
      );
    return o;
  }

  async #write(method: 'POST' | 'PUT', path: string, body: object, name: string): Promise<KubeObject> {
    try {
      return await this.#client.request<KubeObject>(method, path, { body });
    } catch (err) {
      if (err instanceof KubeError && err.status === 422) {
        const message = serverMessage(err);
        throw new WorkflowRefusedError('Invalid', message, specPathOfApiServerMessage(message));
      }
      if (err instanceof KubeError && err.status === 409)
        throw new GatewayError(
          'conflict',
          err.reason === 'AlreadyExists'
            ? `Workflow "${name}" already exists, or its object name is taken by another workflow in this namespace.`
            : `Workflow "${name}" changed while it was being replaced.`,
          { hint: 'Read it again and retry.' },
        );
      throw unavailable(err);
    }
  }

  /**
   * Watches the object until its Ready condition judges the written generation, or the deadline.
   * Watching from the written resourceVersion misses nothing written after it.
   */
  async #settle(written: KubeObject): Promise<{ obj: KubeObject | undefined; verdict: ReadyVerdict }> {
    let latest: KubeObject | undefined = written;
    const judged = () => latest !== undefined && readyOf(latest).status !== 'Unknown';
    const deadline = Date.now() + this.#timeoutMs;
    const ns = written.metadata.namespace ?? '';
    let rv = written.metadata.resourceVersion;
    while (!judged() && latest && Date.now() < deadline) {
      const ac = new AbortController();
      const timer = setTimeout(() => ac.abort(), deadline - Date.now());
      let gone = false;
      try {
        await this.#client.watch(
          collection(ns),
          {
            fieldSelector: `metadata.name=${written.metadata.name}`,
            resourceVersion: rv,
            timeoutSeconds: Math.ceil(this.#timeoutMs / 1000),
          },
          (e: WatchEvent) => {
            if (e.type === 'ERROR') gone = true;
            else if (e.type === 'DELETED') latest = undefined;
            else if (e.type !== 'BOOKMARK') {
              latest = e.object;
              rv = e.object.metadata.resourceVersion;
            }
            if (gone || judged() || !latest) ac.abort();
          },
          ac.signal,
        );
      } catch (err) {
        if (!ac.signal.aborted) gone = true;
        this.#logger.debug({ msg: 'console: workflow watch ended', err: (err as Error).message });
      } finally {
        clearTimeout(timer);
      }
      if (gone && !judged() && latest) {
        // Too old a resourceVersion (410) or a dropped watch: read the object and watch from there.
        latest = await this.#client
          .request<KubeObject>('GET', itemPath(ns, written.metadata.name))
          .catch((err: unknown) => (isNotFound(err) ? undefined : latest));
        rv = latest?.metadata.resourceVersion;
        if (!judged()) await new Promise((r) => setTimeout(r, 100));
      }
    }
    if (!latest)
      return {
        obj: undefined,
        verdict: { status: 'Unknown', reason: 'Deleted', message: 'the workflow was deleted meanwhile' },
      };
    return { obj: latest, verdict: readyOf(latest) };
  }

  async #undo(what: string, fn: () => Promise<unknown>): Promise<void> {
    try {
      await fn();
    } catch (err) {
      // Someone changed it meanwhile: their version stands, and the refusal is still the answer.
      this.#logger.warn({ msg: `console: could not ${what}`, err: (err as Error).message });
    }
  }
}

const refused = (v: ReadyVerdict): WorkflowRefusedError =>
  new WorkflowRefusedError(v.reason, v.message, specPathOfVerdict(v.reason, v.message));

const notFound = (p: ConsoleProject, name: string): GatewayError =>
  new GatewayError('workflow_not_found', `Workflow "${name}" not found in project ${p.id}.`);

function unavailable(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  const forbidden = err instanceof KubeError && err.status === 403;
  return new GatewayError(
    'service_unavailable',
    forbidden
      ? "The gateway's ServiceAccount may not manage Workflows here."
      : 'The Kubernetes API server did not answer; retry shortly.',
    {
      ...(forbidden ? { hint: 'Bind the gateway role of operator/rbac/gateway-*.yaml.' } : {}),
      retryAfterSeconds: 1,
      cause: err,
    },
  );
}
