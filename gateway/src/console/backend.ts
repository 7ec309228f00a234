import type { SnapshotProject } from '#contract';

/**
 * What the console API's routes need from where workflows live: the cluster (Workflow CRs written
 * through the API server, compiled by the operator) or embedded mode's config folder. Both answer
 * with the compiler's Ready verdict and refuse what the Workflow schema or the compiler refuses.
 */

/** A Workflow spec as the console writes it (operator/src/resources/workflow.ts checks the values). */
export interface WorkflowSpec {
  projectRef: { name: string };
  name: string;
  provider: string;
  model: string;
  description?: string;
  requestType?: string;
  eventName?: string;
  backups?: { provider: string; model: string }[];
  systemInstructions?: string;
  structuredOutput?: Record<string, unknown>;
  cacheFields?: string[];
  sessionMemory?: Record<string, unknown>;
  responseCache?: Record<string, unknown>;
  hostedTools?: Record<string, unknown>;
  testMode?: boolean;
}

/** The project of the caller's key; project ids are `<namespace>.<name>`. */
export interface ConsoleProject {
  id: string;
  namespace: string;
  name: string;
  /** The project in the gateway's current snapshot: its providers let a write be checked before it is made. */
  snapshot?: SnapshotProject;
}

export const projectOf = (id: string, snapshot?: SnapshotProject): ConsoleProject => {
  const dot = id.indexOf('.');
  return { id, namespace: id.slice(0, dot), name: id.slice(dot + 1), ...(snapshot ? { snapshot } : {}) };
};

/** The Ready condition the compiler (the operator, or embedded mode's compile) gave the object. */
export interface ReadyVerdict {
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
  observedGeneration?: number;
}

export interface WorkflowRecord {
  /** API name (spec.name, or metadata.name when unset). */
  name: string;
  /** The stored spec, as read back (it may hold fields newer than this gateway). */
  spec: Record<string, unknown>;
  namespace: string;
  objectName: string;
  /** Written by the console (label app.kubernetes.io/managed-by: switchyard-console). */
  managed: boolean;
  generation?: number;
  resourceVersion?: string;
  ready: ReadyVerdict;
}

export interface WriteResult {
  record: WorkflowRecord;
  /** False when the compiler had not judged this generation before the deadline (answered 202). */
  settled: boolean;
}

/**
 * The Workflow schema, the API server or the compiler refused the spec. Nothing was changed: a
 * refused create is removed again, a refused replace is put back.
 */
export class WorkflowRefusedError extends Error {
  readonly code = 'WORKFLOW_REFUSED';
  /** The compiler's condition reason (ProviderNotFound, ...) or Invalid for a schema refusal. */
  readonly reason: string;
  /** The spec field at fault, e.g. `requestType` or `backups[0].provider`. */
  readonly specPath: string | undefined;
  constructor(reason: string, message: string, specPath: string | undefined) {
    super(message);
    this.reason = reason;
    this.specPath = specPath;
  }
}

export interface ConsoleBackend {
  readonly mode: 'kubernetes' | 'folder';
  list(project: ConsoleProject): Promise<WorkflowRecord[]>;
  get(project: ConsoleProject, name: string): Promise<WorkflowRecord | undefined>;
  /** 409 when the name is taken in the project. */
  create(project: ConsoleProject, spec: WorkflowSpec): Promise<WriteResult>;
  /** 404 when absent, 409 when the workflow is not the console's (GitOps or hand-written YAML). */
  replace(project: ConsoleProject, spec: WorkflowSpec): Promise<WriteResult>;
  delete(project: ConsoleProject, name: string): Promise<void>;
}

export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY_CONSOLE = 'switchyard-console';
