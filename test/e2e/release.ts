import { helm } from '../charts/tools.ts';
import type { Cluster } from '../harness/cluster.ts';
import { waitFor } from '../harness/node-network.ts';

/** The release the e2e suite installs, and what it asks the cluster about it. */
export const NS = 'switchyard-system';
export const RELEASE = 'switchyard';
export const GATEWAY = 'switchyard-gateway';
export const OPERATOR = 'switchyard-operator';

export type Component = 'gateway' | 'operator';

export interface PodInfo {
  name: string;
  ip: string;
  ready: boolean;
  deleting: boolean;
}

interface PodList {
  items: {
    metadata: { name: string; deletionTimestamp?: string };
    status: { podIP?: string; conditions?: { type: string; status: string }[] };
  }[];
}

export function releaseTools(cluster: Cluster) {
  const kubectl = async (args: readonly string[], input?: string): Promise<string> => {
    const r = await cluster.kubectl(args, { timeoutMs: 300_000, ...(input === undefined ? {} : { input }) });
    if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
    return r.stdout;
  };
  const pods = async (component: Component): Promise<PodInfo[]> => {
    const selector = `app.kubernetes.io/component=${component}`;
    const list = JSON.parse(
      await kubectl(['get', 'pods', '-n', NS, '-l', selector, '-o', 'json']),
    ) as PodList;
    return list.items.map((p) => ({
      name: p.metadata.name,
      ip: p.status.podIP ?? '',
      deleting: Boolean(p.metadata.deletionTimestamp),
      ready: p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
    }));
  };
  return {
    kubectl,
    pods,
    async helm(args: readonly string[]): Promise<string> {
      const r = await helm(args, { env: { KUBECONFIG: cluster.kubeconfigPath } });
      if (r.code !== 0) throw new Error(`helm ${args.join(' ')} failed (${r.code}):\n${r.stderr}`);
      return r.stdout;
    },
    apply: (objects: unknown[]) =>
      kubectl(['apply', '--server-side', '-f', '-'], objects.map((o) => JSON.stringify(o)).join('\n')),
    async rolledOut(deployment: string): Promise<void> {
      await kubectl(['rollout', 'status', `deployment/${deployment}`, '-n', NS, '--timeout=240s']);
    },
    /** Waits until exactly `n` pods of the component exist, all Ready, none terminating. */
    settled: (component: Component, n: number, timeoutMs = 120_000): Promise<PodInfo[]> =>
      waitFor(
        `${n} ready ${component} pods and none terminating`,
        async () => {
          const ps = await pods(component);
          return ps.length === n && ps.every((p) => p.ready && !p.deleting) ? ps : undefined;
        },
        timeoutMs,
        500,
      ),
  };
}
