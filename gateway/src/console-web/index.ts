import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { KubeClient } from '#operator/kube/index';
import type { Pipeline } from '../pipeline/run.ts';
import type { SnapshotStore } from '../snapshot/store.ts';
import type { ConsoleWebReads } from './reads.ts';
import { ConsoleSessions, type SessionLimits } from './sessions.ts';
import type { ConsoleSessionStore } from './store.ts';

export { bundleReady } from './static.ts';
export { MemoryConsoleSessionStore, RedisConsoleSessionStore } from './store.ts';
export type { ConsoleSessionStore };

/** Where the console's built pages are and where the gateway is mounted. */
export interface ConsoleWebOptions {
  /** The build's output (`make console`): index.html and assets/. */
  dir: string;
  /** The path prefix the browser sees the gateway under; X-Forwarded-Prefix decides when unset. */
  basePath?: string | undefined;
  limits?: Partial<SessionLimits> | undefined;
  /** How often the live tail reads the request log (default 1 s). */
  tailPollMs?: number | undefined;
  /** Live tails one project may hold open on a gateway at once (default 16). */
  tailsPerProject?: number | undefined;
  /** The playground's simulated backend answers a backend-pipeline workflow after this long (1.5 s). */
  simulatedBackendMs?: number | undefined;
  /** Kubernetes identities sign in too (../console-kube/): the gateway's client for the reviews. */
  identities?: { client: KubeClient } | undefined;
}

export type { ConsoleWebReads };

export const consoleWebEnv = z.object({
  SWITCHYARD_CONSOLE_DIR: z.string().min(1).default('dist/console'),
  SWITCHYARD_CONSOLE_BASE_PATH: z
    .string()
    .regex(/^(\/[A-Za-z0-9._~-]+)*$/, 'must be empty or a path like /switchyard, without a trailing slash')
    .optional(),
  SWITCHYARD_SIMULATED_BACKEND_MS: z.coerce.number().int().min(0).default(1500),
});

/** The console's settings from the environment (the caller decides whether the console is on). */
export function consoleWebFromEnv(env: NodeJS.ProcessEnv = process.env): ConsoleWebOptions {
  const e = consoleWebEnv.parse(env);
  return {
    dir: e.SWITCHYARD_CONSOLE_DIR,
    basePath: e.SWITCHYARD_CONSOLE_BASE_PATH,
    simulatedBackendMs: e.SWITCHYARD_SIMULATED_BACKEND_MS,
  };
}

/**
 * The web console: its sessions (the cookie alternative app.ts asks on console routes) and its
 * routes, whose module is imported only when the app registers them, so a gateway without the
 * console loads none of it.
 */
export class ConsoleWeb {
  readonly sessions: ConsoleSessions;
  readonly #opts: ConsoleWebOptions;
  readonly #store: ConsoleSessionStore;
  readonly #snapshots: SnapshotStore;
  readonly #now: () => number;
  readonly #reads: ConsoleWebReads;

  constructor(
    store: ConsoleSessionStore,
    snapshots: SnapshotStore,
    now: () => number,
    opts: ConsoleWebOptions,
    reads: ConsoleWebReads,
  ) {
    this.sessions = new ConsoleSessions(store, opts.limits);
    this.#store = store;
    this.#opts = opts;
    this.#reads = reads;
    this.#snapshots = snapshots;
    this.#now = now;
  }

  /** Its pages and session endpoints, and the playground, which runs requests through `pipeline`. */
  register(app: FastifyInstance, pipeline: Pipeline): void {
    void app.register(
      async (scoped) => {
        const { consoleWebRoutes } = await import('./routes.ts');
        await consoleWebRoutes(scoped, {
          dir: this.#opts.dir,
          basePath: this.#opts.basePath,
          sessions: this.sessions,
          snapshots: this.#snapshots,
          now: this.#now,
          pipeline,
          reads: this.#reads,
          tailPollMs: this.#opts.tailPollMs,
          tailsPerProject: this.#opts.tailsPerProject,
          simulatedBackendMs: this.#opts.simulatedBackendMs,
        });
        if (this.#opts.identities) await this.#identities(scoped, this.#opts.identities.client);
      },
      { prefix: '/console' },
    );
  }

  async #identities(app: FastifyInstance, client: KubeClient): Promise<void> {
    const [{ kubeConsoleRoutes }, { KubeSessions }] = await Promise.all([
      import('../console-kube/routes.ts'),
      import('../console-kube/sessions.ts'),
    ]);
    kubeConsoleRoutes(app, {
      client,
      sessions: new KubeSessions(this.#store),
      projects: () => this.#snapshots.current?.projects.keys() ?? [],
      basePath: this.#opts.basePath,
    });
  }

  /**
   * A one-time sign-in link's token for the first key with the console scope (embedded mode prints
   * it): the browser that opens the link is signed in, and the link is spent.
   */
  async oneTimeLink(ttlMs = 24 * 3_600_000): Promise<string | undefined> {
    const rt = this.#snapshots.current;
    if (!rt) return undefined;
    for (const [keyHash, key] of rt.keys)
      if (key.scopes.includes('console') && key.notAfterMs > this.#now())
        return this.sessions.issueLink({ keyHash, projectId: key.projectId }, ttlMs);
    return undefined;
  }
}
