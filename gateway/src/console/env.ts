import type { Logger } from 'pino';
import { z } from 'zod';
import type { KubeClient as KubeClientLike } from '#operator/kube/index';
import type { ConsoleBackend, ConsoleProject, WorkflowRecord, WorkflowSpec, WriteResult } from './backend.ts';

/** Console API settings from the environment (off on a cluster unless asked for). */
export const consoleEnv = z.object({
  /** kubernetes: write Workflow CRs (gateway pods); folder: embedded mode's default; off: no console API. */
  SWITCHYARD_CONSOLE: z.enum(['off', 'kubernetes', 'folder']).optional(),
  /** How long a write waits for the operator's verdict before answering 202. */
  /**
   * true (with kubernetes): Kubernetes identities sign in to the web console with a bearer token,
   * checked by TokenReview, every view and write by SubjectAccessReview (docs/console.md).
   */
  SWITCHYARD_CONSOLE_IDENTITIES: z.enum(['true', 'false']).default('false'),
  SWITCHYARD_CONSOLE_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
});
export type ConsoleEnv = z.infer<typeof consoleEnv>;

export class ConsoleConfigError extends Error {
  readonly code = 'CONSOLE_CONFIG_INVALID';
}

export function readConsoleEnv(env: NodeJS.ProcessEnv = process.env): ConsoleEnv {
  const parsed = consoleEnv.safeParse(env);
  if (!parsed.success)
    throw new ConsoleConfigError(
      `invalid environment: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  return parsed.data;
}

/**
 * The cluster backend when SWITCHYARD_CONSOLE=kubernetes: the API server from KUBECONFIG, else the
 * pod's in-cluster ServiceAccount (client-node's default lookup). Undefined otherwise.
 *
 * Imported on the first console call, not at start: the kubeconfig of @kubernetes/client-node and
 * the operator's compiler cost a bundled pod about 15 MB of RSS and 0.1 s of start-up, for an API
 * most pods never serve.
 */
export async function kubernetesConsole(
  env: ConsoleEnv,
  logger: Logger,
): Promise<ConsoleBackend | undefined> {
  if (env.SWITCHYARD_CONSOLE !== 'kubernetes') return undefined;
  return new LazyConsoleBackend(async () => {
    const [{ KubeClient, loadKubeConfig }, { KubeConsoleBackend }] = await Promise.all([
      import('#operator/kube/index'),
      import('./kube-backend.ts'),
    ]);
    const client = new KubeClient(loadKubeConfig());
    return new KubeConsoleBackend({ client, logger, settleTimeoutMs: env.SWITCHYARD_CONSOLE_TIMEOUT_MS });
  });
}

/** The cluster backend, built on its first call (a failed build is retried on the next). */
class LazyConsoleBackend implements ConsoleBackend {
  readonly mode = 'kubernetes' as const;
  readonly #build: () => Promise<ConsoleBackend>;
  #backend: Promise<ConsoleBackend> | undefined;

  constructor(build: () => Promise<ConsoleBackend>) {
    this.#build = build;
  }

  #get(): Promise<ConsoleBackend> {
    this.#backend ??= this.#build().catch((err: unknown) => {
      this.#backend = undefined;
      throw err;
    });
    return this.#backend;
  }

  async list(project: ConsoleProject): Promise<WorkflowRecord[]> {
    return (await this.#get()).list(project);
  }
  async get(project: ConsoleProject, name: string): Promise<WorkflowRecord | undefined> {
    return (await this.#get()).get(project, name);
  }
  async create(project: ConsoleProject, spec: WorkflowSpec): Promise<WriteResult> {
    return (await this.#get()).create(project, spec);
  }
  async replace(project: ConsoleProject, spec: WorkflowSpec): Promise<WriteResult> {
    return (await this.#get()).replace(project, spec);
  }
  async delete(project: ConsoleProject, name: string): Promise<void> {
    return (await this.#get()).delete(project, name);
  }
}

/** The gateway's client for Kubernetes identities' sign-in, when SWITCHYARD_CONSOLE_IDENTITIES=true on a cluster. */
export async function kubernetesIdentities(env: ConsoleEnv): Promise<{ client: KubeClientLike } | undefined> {
  if (env.SWITCHYARD_CONSOLE !== 'kubernetes' || env.SWITCHYARD_CONSOLE_IDENTITIES !== 'true')
    return undefined;
  const { KubeClient, loadKubeConfig } = await import('#operator/kube/index');
  return { client: new KubeClient(loadKubeConfig()) };
}
