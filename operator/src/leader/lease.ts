import type { Logger } from 'pino';
import { isConflict, isNotFound, type KubeClient, type KubeObject } from '../kube/client.ts';

/**
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it:
 * - try every `retryMs`; the holder renews (renewTime) on the same tick;
 * - a candidate takes the Lease when it is free (no holder) or when the holder has not renewed for
 *   leaseDurationSeconds, measured on the candidate's own clock since it last saw the record change
 *   (so clock skew between replicas does not matter);
 * - writes carry the resourceVersion read, so two candidates never both win;
 * - a leader that cannot renew for `renewDeadlineMs` steps down before others may take over;
 * - release() clears holderIdentity and sets a 1 s duration, so a standby takes over at once.
 */

/** A coordination.k8s.io/v1 Lease: the spec fields the election reads and writes. */
type Lease = KubeObject & {
  spec?: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
    [k: string]: unknown;
  };
};

export interface LeaderOptions {
  /** Plain REST: client-node's generated API classes would load every model it has (~850 files). */
  client: KubeClient;
  namespace: string;
  name: string;
  identity: string;
  logger: Logger;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryMs?: number;
  onStartedLeading: () => void;
  onStoppedLeading: () => void;
}

/** MicroTime must have six fractional digits; Date#toISOString gives three. */
export const microTime = (d: Date): string => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

export class LeaderElector {
  readonly #o: Required<LeaderOptions>;
  #leading = false;
  #timer: NodeJS.Timeout | undefined;
  #stopped = true;
  #lastRenew = 0;
  /** What we last saw and when, on our own clock. */
  #observed: { rv: string; holder: string; renew: string; at: number; durationMs: number } | undefined;
  #tick: Promise<void> = Promise.resolve();

  constructor(opts: LeaderOptions) {
    this.#o = { leaseDurationMs: 10_000, renewDeadlineMs: 8_000, retryMs: 2_000, ...opts };
  }

  #path(name?: string): string {
    const base = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.#o.namespace)}/leases`;
    return name === undefined ? base : `${base}/${encodeURIComponent(name)}`;
  }

  #read(): Promise<Lease> {
    return this.#o.client.request<Lease>('GET', this.#path(this.#o.name));
  }

  #replace(body: Lease): Promise<Lease> {
    return this.#o.client.request<Lease>('PUT', this.#path(this.#o.name), { body });
  }

  get isLeader(): boolean {
    return this.#leading;
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#schedule(0);
  }

  #schedule(ms: number): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#tick = this.#tryAcquireOrRenew()
        .catch((err: unknown) =>
          this.#o.logger.warn({ msg: 'lease attempt failed', err: (err as Error).message }),
        )
        .finally(() => this.#schedule(this.#nextDelay()));
    }, ms);
  }

  /** A standby retries right when the holder's Lease would expire, not up to retryMs later. */
  #nextDelay(): number {
    const o = this.#observed;
    if (this.#leading || !o || !o.holder || o.holder === this.#o.identity) return this.#o.retryMs;
    const untilExpiry = o.at + o.durationMs - Date.now() + 20;
    return Math.max(50, Math.min(this.#o.retryMs, untilExpiry));
  }

  async #tryAcquireOrRenew(): Promise<void> {
    const { namespace, name, identity } = this.#o;
    const now = new Date();
    let lease: Lease | undefined;
    try {
      lease = await this.#read();
    } catch (err) {
      if (!isNotFound(err)) {
        this.#checkDeadline();
        throw err;
      }
    }
    const spec = {
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(this.#o.leaseDurationMs / 1000),
      acquireTime: microTime(now),
      renewTime: microTime(now),
      leaseTransitions: 0,
    };
    if (!lease) {
      try {
        const body: Lease = {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name, namespace },
          spec,
        };
        await this.#o.client.request<Lease>('POST', this.#path(), { body });
      } catch (err) {
        if (isConflict(err)) return; // someone else created it first
        throw err;
      }
      this.#becomeLeader();
      return;
    }
    const holder = lease.spec?.holderIdentity ?? '';
    const renew = lease.spec?.renewTime ?? '';
    const rv = lease.metadata?.resourceVersion ?? '';
    const durationMs = (lease.spec?.leaseDurationSeconds ?? 10) * 1000;
    if (!this.#observed || this.#observed.holder !== holder || this.#observed.renew !== renew)
      this.#observed = { rv, holder, renew, at: Date.now(), durationMs };
    const expired = Date.now() > this.#observed.at + durationMs;
    if (holder && holder !== identity && !expired) {
      if (this.#leading) this.#loseLeadership('another replica holds the Lease');
      return;
    }
    const takingOver = holder !== identity;
    const body: Lease = {
      ...lease,
      spec: {
        ...lease.spec,
        holderIdentity: identity,
        leaseDurationSeconds: spec.leaseDurationSeconds,
        renewTime: spec.renewTime,
        ...(takingOver
          ? { acquireTime: spec.acquireTime, leaseTransitions: (lease.spec?.leaseTransitions ?? 0) + 1 }
          : { acquireTime: lease.spec?.acquireTime ?? spec.acquireTime }),
      },
    };
    try {
      await this.#replace(body);
    } catch (err) {
      if (isConflict(err)) {
        this.#checkDeadline();
        return;
      }
      this.#checkDeadline();
      throw err;
    }
    if (takingOver)
      this.#o.logger.info({
        msg: 'acquired the Lease',
        lease: `${namespace}/${name}`,
        previousHolder: holder || null,
      });
    this.#becomeLeader();
  }

  #becomeLeader(): void {
    this.#lastRenew = Date.now();
    if (this.#leading) return;
    this.#leading = true;
    this.#o.onStartedLeading();
  }

  #checkDeadline(): void {
    if (this.#leading && Date.now() - this.#lastRenew > this.#o.renewDeadlineMs)
      this.#loseLeadership('could not renew the Lease in time');
  }

  #loseLeadership(why: string): void {
    if (!this.#leading) return;
    this.#leading = false;
    this.#o.logger.warn({ msg: 'lost leadership', why });
    this.#o.onStoppedLeading();
  }

  /** Stops campaigning. With `release`, a held Lease is handed back at once. */
  async stop(opts: { release: boolean }): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#tick;
    const wasLeading = this.#leading;
    if (wasLeading) {
      this.#leading = false;
      this.#o.onStoppedLeading();
    }
    if (!opts.release || !wasLeading) return;
    const { namespace, name, identity } = this.#o;
    try {
      const lease = await this.#read();
      if (lease.spec?.holderIdentity !== identity) return;
      const { holderIdentity: _released, ...spec } = lease.spec;
      await this.#replace({
        ...lease,
        spec: { ...spec, leaseDurationSeconds: 1, renewTime: microTime(new Date()) },
      });
      this.#o.logger.info({ msg: 'released the Lease', lease: `${namespace}/${name}` });
    } catch (err) {
      this.#o.logger.warn({ msg: 'could not release the Lease', err: (err as Error).message });
    }
  }
}
