import type { Cluster, Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Snapshot } from '#contract';
import { compileSnapshot, refKey, refOf, type Verdict } from '../compiler/index.ts';
import { referencedSecretIds } from '../compiler/referenced-secrets.ts';
import { generatedKeySecretName } from '../keys/secret-fields.ts';
import { previousValidUntil } from '../keys/secret-plan.ts';
import { ensureGeneratedKeys } from '../keys/step.ts';
import { isNotFound, type KubeClient, type KubeObject } from '../kube/client.ts';
import type { EventRecorder } from '../kube/events.ts';
import type { Informer, InformerEvent } from '../kube/informer.ts';
import { McpProber } from '../mcp/prober.ts';
import type { OperatorMetrics } from '../metrics.ts';
import type { SnapshotPublisher } from '../publish/redis-publisher.ts';
import { API_VERSION, GROUP, VERSION } from '../resources/common.ts';
import {
  type ApiKey,
  KINDS,
  type SwitchyardKind,
  type SwitchyardObject,
  switchyardObject,
} from '../resources/index.ts';
import { decodeSecret, type Secret, type SecretData } from '../resources/secret.ts';
import type { CapSpend, WebhookHealth } from '../spend/spend.ts';
import { readCapSpend, readWebhookHealth } from '../spend/spend.ts';
import { findCondition, readyTransition, sameStatus, statusMergePatch } from '../status/conditions.ts';
import { currentStatus, desiredStatus } from '../status/desired.ts';
import { type Judged, statusExtras } from '../status/extra-fields.ts';
import { WorkQueue } from './queue.ts';

export const SNAPSHOT_KEY = 'snapshot';
export const SPEND_KEY = 'spend';
export const MCP_KEY = 'mcp';
export const MCP_STATUS_KEY = 'mcp-status';
export const STATUS_KEY = 'status';
const DEBOUNCE_MS = 75;
const STATUS_CONCURRENCY = 16;

export const PLURALS: Record<SwitchyardKind, string> = Object.fromEntries(
  KINDS.map((k) => [k.info.kind, k.info.plural]),
) as Record<SwitchyardKind, string>;

export interface ControllerDeps {
  client: KubeClient;
  informers: Record<SwitchyardKind | 'Secret', Informer>;
  publisher: SnapshotPublisher;
  redis: Redis | Cluster;
  sealKey: Buffer;
  metrics: OperatorMetrics;
  logger: Logger;
  events: EventRecorder;
  spendRefreshMs: number;
  /** How often MCPServers are probed again while their configuration stays the same. */
  mcpProbeMs?: number;
  now?: () => Date;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** What about an object matters to the snapshot: not status, not resourceVersion, not managedFields. */
export function fingerprint(kind: string, o: KubeObject | undefined): string {
  if (!o) return '';
  if (kind === 'Secret') return JSON.stringify([o.type ?? '', o.data ?? {}, o.metadata.annotations ?? {}]);
  return JSON.stringify([
    o.metadata.generation ?? 0,
    o.metadata.deletionTimestamp ?? '',
    o.metadata.uid ?? '',
    o.spec ?? {},
  ]);
}

/**
 * The reconciler. Level-based: every pass recomputes the whole snapshot from the informer caches,
 * whatever event woke it. Any relevant change enqueues one debounced "snapshot" key; "spend" runs
 * on a timer. Only the leader runs the queue; standbys keep warm caches.
 */
export class Controller {
  readonly queue: WorkQueue;
  readonly #d: ControllerDeps;
  readonly #now: () => Date;
  #spendTimer: NodeJS.Timeout | undefined;
  #mcpTimer: NodeJS.Timeout | undefined;
  readonly mcp: McpProber;
  #last: { snapshot: Snapshot; judged: Judged[] } | undefined;
  #spend = new Map<string, CapSpend>();
  #webhooks = new Map<string, WebhookHealth>();
  #leading = false;
  /** Snapshot reconciles run (tests and the loop check read it). */
  snapshotReconciles = 0;
  lastPublishedVersion: string | undefined;

  constructor(deps: ControllerDeps) {
    this.#d = deps;
    this.#now = deps.now ?? (() => new Date());
    this.queue = new WorkQueue((n) => deps.metrics.queueDepth.set(n));
    this.mcp = new McpProber({ sealKey: deps.sealKey, intervalMs: deps.mcpProbeMs ?? 60_000 });
  }

  /** Informer callback: enqueue only when something the snapshot depends on changed. */
  onEvent(kind: SwitchyardKind | 'Secret', event: InformerEvent, obj?: KubeObject, old?: KubeObject): void {
    if (event === 'update' && fingerprint(kind, obj) === fingerprint(kind, old)) return; // status-only write
    this.queue.add(SNAPSHOT_KEY, DEBOUNCE_MS);
  }

  start(): void {
    if (this.#leading) return;
    this.#leading = true;
    this.queue.add(SNAPSHOT_KEY);
    this.queue.start((key) => this.#handle(key));
    this.#spendTimer = setInterval(() => this.queue.add(SPEND_KEY), this.#d.spendRefreshMs);
    this.#spendTimer.unref();
    this.#mcpTimer = setInterval(() => this.queue.add(MCP_KEY), this.#d.mcpProbeMs ?? 60_000);
    this.#mcpTimer.unref();
  }

  async stop(): Promise<void> {
    this.#leading = false;
    clearInterval(this.#spendTimer);
    clearInterval(this.#mcpTimer);
    await this.queue.stop();
    this.queue.clear();
  }

  async #handle(key: string): Promise<void> {
    const kind =
      {
        [SNAPSHOT_KEY]: 'Snapshot',
        [STATUS_KEY]: 'Status',
        [MCP_KEY]: 'McpProbe',
        [MCP_STATUS_KEY]: 'McpStatus',
      }[key] ?? 'Spend';
    const end = this.#d.metrics.reconcileDuration.startTimer({ kind });
    try {
      if (key === SNAPSHOT_KEY) await this.reconcileSnapshot();
      else if (key === STATUS_KEY) await this.writeAllStatuses();
      else if (key === SPEND_KEY) await this.refreshSpend();
      else if (key === MCP_KEY) this.#probeMcp();
      else if (key === MCP_STATUS_KEY) await this.writeMcpStatuses();
    } catch (err) {
      this.#d.metrics.reconciles.inc({ kind, result: 'error' });
      this.#d.logger.error({
        msg: 'reconcile failed; retrying with backoff',
        key,
        err: (err as Error).message,
      });
      throw err;
    } finally {
      end();
    }
  }

  async reconcileSnapshot(): Promise<void> {
    this.snapshotReconciles++;
    const now = this.#now();
    const { informers, logger, metrics } = this.#d;
    const objects: SwitchyardObject[] = [];
    const raw = new Map<SwitchyardObject, KubeObject>();
    const invalid: Judged[] = [];
    for (const k of KINDS) {
      const kind = k.info.kind as SwitchyardKind;
      for (const o of informers[kind].list()) {
        if (o.metadata.deletionTimestamp) continue;
        const parsed = switchyardObject.safeParse({ ...o, apiVersion: API_VERSION, kind });
        if (parsed.success) {
          objects.push(parsed.data);
          raw.set(parsed.data, o);
        } else
          invalid.push({
            obj: o,
            kind,
            parsed: undefined,
            verdict: {
              ok: false,
              reason: 'InvalidSpec',
              message: parsed.error.issues
                .map((i) => `${i.path.join('.')}: ${i.message}`)
                .join('; ')
                .slice(0, 1000),
              details: {},
            },
          });
      }
    }

    // The key step first, so this very pass compiles with the keys it generated.
    const keys = await ensureGeneratedKeys(
      objects.filter((o): o is ApiKey => o.kind === 'ApiKey'),
      now,
      {
        client: this.#d.client,
        secrets: informers.Secret,
        logger,
        event: (key, reason, message) => {
          const src = raw.get(key);
          if (src) this.#event(src, 'ApiKey', 'Normal', reason, message);
        },
      },
    );
    if (keys.stale) this.queue.add(SNAPSHOT_KEY, 500);

    const secrets = this.#referencedSecrets(objects);
    const { snapshot, verdicts } = compileSnapshot({ objects, secrets, now, sealKey: this.#d.sealKey });
    const result = await this.#d.publisher.publish(snapshot);
    this.lastPublishedVersion = snapshot.version;
    metrics.setSnapshotVersion(snapshot.version);
    metrics.snapshotBytes.set(result.bytes);
    metrics.lastPublish.set(Date.now() / 1000);
    metrics.reconciles.inc({ kind: 'Snapshot', result: result.published ? 'published' : 'unchanged' });
    if (result.published)
      logger.info({
        msg: 'snapshot published',
        version: snapshot.version,
        bytes: result.bytes,
        projects: Object.keys(snapshot.projects).length,
        apiKeys: Object.keys(snapshot.apiKeys).length,
      });

    const byRef = new Map<string, Verdict>();
    for (const v of verdicts) byRef.set(refKey(v.ref), v);
    const judged: Judged[] = [...invalid];
    metrics.snapshotObjects.reset();
    for (const o of objects) {
      const v = byRef.get(refKey(refOf(o)));
      const src = raw.get(o);
      if (!v || !src) continue;
      judged.push({ obj: src, kind: o.kind, parsed: o, verdict: v });
      metrics.snapshotObjects.inc({ kind: o.kind, ready: String(v.ok) });
      metrics.reconciles.inc({ kind: o.kind, result: v.ok ? 'ready' : 'not_ready' });
    }
    this.#last = { snapshot, judged };
    this.#scheduleExpiries(objects, now);
    // Status is written as its own queue item, after the publish: gateways never wait for it.
    this.queue.add(STATUS_KEY);
    this.queue.add(MCP_KEY);
  }

  /**
   * Writes the status of every object from the last compile. Yields (and requeues itself) as soon
   * as a new snapshot reconcile is due, so a burst of status writes never delays a publish.
   */
  async writeAllStatuses(): Promise<void> {
    if (!this.#last) return;
    const done = await this.#writeStatuses(this.#last.judged, this.#now(), () =>
      this.queue.isDue(SNAPSHOT_KEY),
    );
    if (!done) this.queue.add(STATUS_KEY);
  }

  async refreshSpend(): Promise<void> {
    if (!this.#last) return;
    const now = this.#now();
    [this.#spend, this.#webhooks] = await Promise.all([
      readCapSpend(this.#d.redis, this.#last.snapshot, now),
      readWebhookHealth(this.#d.redis, this.#last.snapshot),
    ]);
    this.#d.metrics.reconciles.inc({ kind: 'SpendCapSpend', result: 'ok' });
    // Status writes are skipped when nothing changed, so refreshing every few seconds stays quiet.
    await this.#writeStatuses(
      this.#last.judged.filter((j) => j.kind === 'SpendCap' || j.kind === 'Project'),
      now,
    );
  }

  /** Probes new, changed or due MCP servers beside the queue: a hanging one never delays a publish. */
  #probeMcp(): void {
    if (!this.#last) return;
    // A finished probe may have been of a configuration changed meanwhile: look again (fresh ones are skipped).
    this.mcp
      .run(this.#last.snapshot, this.#now, () => {
        this.queue.add(MCP_STATUS_KEY);
        this.queue.add(MCP_KEY);
      })
      .catch((err: Error) => this.#d.logger.error({ msg: 'MCP probe failed', err: err.message }));
  }

  async writeMcpStatuses(): Promise<void> {
    if (!this.#last) return;
    this.#d.metrics.reconciles.inc({ kind: 'McpProbe', result: 'ok' });
    await this.#writeStatuses(
      this.#last.judged.filter((j) => j.kind === 'MCPServer'),
      this.#now(),
    );
  }

  #referencedSecrets(objects: readonly SwitchyardObject[]): SecretData[] {
    const wanted = referencedSecretIds(objects);
    const out: SecretData[] = [];
    for (const id of wanted) {
      const [ns = '', name = ''] = id.split('/');
      const s = this.#d.informers.Secret.get(ns, name);
      if (s) out.push(decodeSecret({ ...(s as unknown as Secret), apiVersion: 'v1', kind: 'Secret' }));
    }
    return out;
  }

  /** Wake up at the next key expiry or end of a rotation grace period, so it takes effect on time. */
  #scheduleExpiries(objects: readonly SwitchyardObject[], now: Date): void {
    let next = Number.POSITIVE_INFINITY;
    for (const o of objects) {
      if (o.kind !== 'ApiKey') continue;
      const exp = o.spec.expiresAt ? Date.parse(o.spec.expiresAt) : Number.NaN;
      if (exp > now.getTime()) next = Math.min(next, exp);
      const secretName = o.spec.secretRef?.name ?? generatedKeySecretName(o.metadata.name);
      const until = previousValidUntil(this.#d.informers.Secret.get(o.metadata.namespace, secretName), now);
      if (until) next = Math.min(next, Date.parse(until));
    }
    if (Number.isFinite(next)) this.queue.add(SNAPSHOT_KEY, Math.min(next - now.getTime() + 20, 2 ** 31 - 1));
  }

  /** Returns false when it stopped early because `yieldTo` said more urgent work is waiting. */
  async #writeStatuses(
    judged: readonly Judged[],
    now: Date,
    yieldTo: () => boolean = () => false,
  ): Promise<boolean> {
    let i = 0;
    let interrupted = false;
    const work = async () => {
      while (i < judged.length && !interrupted) {
        if (yieldTo()) {
          interrupted = true;
          return;
        }
        const j = judged[i++];
        if (j) await this.#writeStatus(j, now);
      }
    };
    await Promise.all(Array.from({ length: STATUS_CONCURRENCY }, work));
    return !interrupted;
  }

  async #writeStatus(j: Judged, now: Date): Promise<void> {
    const { kind } = j;
    // Compare with the freshest copy: our own earlier writes are in the cache already.
    const obj = this.#d.informers[kind].get(j.obj.metadata.namespace ?? '', j.obj.metadata.name);
    if (!obj || obj.metadata.uid !== j.obj.metadata.uid) return;
    // The raw status is what the merge patch diffs against (fields an older operator wrote included).
    const current = isRecord(obj.status) ? obj.status : undefined;
    const typed = currentStatus(kind, current);
    const seen = {
      secrets: this.#d.informers.Secret,
      spend: this.#spend,
      webhooks: this.#webhooks,
      mcp: this.mcp,
    };
    const { fields, conditions } = statusExtras(j, now, seen, current);
    const desired = desiredStatus({
      kind,
      generation: j.obj.metadata.generation,
      current: typed,
      verdict: j.verdict,
      extra: fields,
      conditions,
      now,
    });
    if (sameStatus(current, desired)) return;
    const ns = obj.metadata.namespace ?? '';
    const path = `/apis/${GROUP}/${VERSION}/namespaces/${ns}/${PLURALS[kind]}/${obj.metadata.name}/status`;
    try {
      const written: KubeObject = await this.#d.client.request('PATCH', path, {
        body: statusMergePatch(current, desired),
        contentType: 'application/merge-patch+json',
      });
      this.#d.informers[kind].upsertLocal(written);
      this.#d.metrics.statusWrites.inc({ kind });
    } catch (err) {
      if (isNotFound(err)) return; // deleted meanwhile
      throw err;
    }
    const before = findCondition(typed?.conditions, 'Ready');
    const after = findCondition(desired.conditions, 'Ready');
    const t = after && readyTransition(before, after);
    if (t && after) this.#event(obj, kind, t.type, t.reason, after.message);
  }

  #event(obj: KubeObject, kind: string, type: 'Normal' | 'Warning', reason: string, message: string): void {
    this.#d.events.record(
      {
        apiVersion: API_VERSION,
        kind,
        namespace: obj.metadata.namespace ?? 'default',
        name: obj.metadata.name,
        ...(obj.metadata.uid ? { uid: obj.metadata.uid } : {}),
      },
      type,
      reason,
      message,
    );
  }
}
