import { Counter, Gauge, type Registry } from 'prom-client';

/** Session metrics, registered on the gateway's registry once (several stage builds may share it). */
export interface SessionMetrics {
  started: Counter<'project' | 'workflow'>;
  summaries: Counter<'project' | 'workflow' | 'outcome'>;
  active: Gauge<'project'>;
}

const built = new WeakMap<Registry, SessionMetrics>();

/**
 * `countActive` is asked at scrape time for each project this gateway has served sessions for; on
 * Redis every pod reports the project's shared count, so dashboards take max() across pods, not sum().
 */
export function sessionMetrics(
  registry: Registry,
  projects: ReadonlySet<string>,
  countActive: (projectId: string) => Promise<number>,
): SessionMetrics {
  const have = built.get(registry);
  if (have) return have;
  const m: SessionMetrics = {
    started: new Counter({
      name: 'switchyard_sessions_started_total',
      help: 'Sessions started (requests to a session-memory workflow without session_id).',
      labelNames: ['project', 'workflow'] as const,
      registers: [registry],
    }),
    summaries: new Counter({
      name: 'switchyard_session_summaries_total',
      help: 'Session summarisations, by outcome: success, error (turns kept), stale (another gateway folded first).',
      labelNames: ['project', 'workflow', 'outcome'] as const,
      registers: [registry],
    }),
    active: new Gauge({
      name: 'switchyard_sessions_active',
      help: 'Sessions that have not expired, per project (shared state: take max() across gateways).',
      labelNames: ['project'] as const,
      registers: [registry],
      async collect() {
        for (const p of projects) {
          try {
            this.set({ project: p }, await countActive(p));
          } catch {
            // State unreachable at scrape time: keep the last value rather than fail the scrape.
          }
        }
      },
    }),
  };
  built.set(registry, m);
  return m;
}
