import { capFinished, rateCorrected } from './lease-returns.ts';
import { capFree, rateGive, rateShort, runsPastCommitment } from './lease-sizing.ts';
import type { CapLease, LeaseNeeds, LeasesOptions, RateLease, Taken } from './lease-types.ts';
import { ProjectLeases } from './project-leases.ts';
import type { CapRule } from './rules.ts';
import type { RateRef } from './store.ts';
import type { CapInPeriod } from './thresholds.ts';

type CapNeed = LeaseNeeds['caps'][number];
const rateNeedShort = (n: LeaseNeeds['rates'][number]): boolean => rateShort(n.lease, n.units);
const capShort = (n: CapNeed): boolean => capFree(n.lease) < n.micros;
const TAKEN: Taken = Object.freeze({ ok: true });

function takeRates(needs: LeaseNeeds, now: number): void {
  for (const n of needs.rates) {
    n.lease.units -= n.units;
    n.lease.lastAdmitMs = now;
  }
}

/**
 * This pod's leases on rate limits and spend caps (docs/api.md, "Spend caps and rate
 * limits"): requests are admitted against them in process, and the store is called once per
 * project per event-loop turn at most (project-leases.ts), to report what finished requests cost
 * and what running ones commit, and to renew what ran out. How big the leases are is
 * lease-sizing.ts; what requests and calls move through them, lease-returns.ts. Idle leases are
 * given back; a keepalive keeps running ones alive.
 */
export class Leases {
  readonly #o: LeasesOptions;
  readonly #projects = new Map<string, ProjectLeases>();
  readonly #timer: NodeJS.Timeout;
  #closed = false;
  readonly #isClosed = (): boolean => this.#closed;

  constructor(o: LeasesOptions) {
    this.#o = o;
    this.#timer = setInterval(() => this.#tick(), Math.max(50, Math.floor(o.ttlMs / 3)));
    this.#timer.unref();
  }

  #project(projectId: string): ProjectLeases {
    let p = this.#projects.get(projectId);
    if (!p) {
      p = new ProjectLeases(projectId, this.#o, this.#isClosed);
      this.#projects.set(projectId, p);
    }
    return p;
  }

  cap(projectId: string, ref: CapInPeriod, rule: CapRule): CapLease {
    const p = this.#project(projectId);
    let l = p.caps.get(ref.key);
    if (!l) {
      l = {
        projectId,
        ref,
        rule,
        granted: 0,
        inflight: 0,
        used: 0,
        committed: 0,
        lastNeed: 0,
        ceiling: Number.POSITIVE_INFINITY,
        tight: false,
        lastAdmitMs: 0,
      };
      p.caps.set(ref.key, l);
    } else {
      l.ref = ref;
      l.rule = rule;
    }
    return l;
  }

  rate(projectId: string, ref: RateRef): RateLease {
    const p = this.#project(projectId);
    let l = p.rates.get(ref.key);
    if (!l) {
      l = {
        projectId,
        ref,
        units: 0,
        releasing: false,
        remaining: ref.burst,
        resetMs: 0,
        answeredAtMs: 0,
        lastAdmitMs: 0,
      };
      p.rates.set(ref.key, l);
    }
    return l;
  }

  /** Every cap lease this pod holds. */
  *caps(): Iterable<CapLease> {
    for (const p of this.#projects.values()) yield* p.caps.values();
  }

  /**
   * Takes what a request needs: every limit's units or none (a refused limit takes nothing), then
   * every cap's µUSD or none (a refused cap leaves the limits' units taken). When every lease has
   * room, as for most requests, it answers at once: no store call, no promise. Otherwise it calls
   * the store for the leases that ran short, and the promise rejects with LeasesUnavailableError
   * when that call fails.
   */
  take(projectId: string, needs: LeaseNeeds): Taken | Promise<Taken> {
    if (needs.rates.some(rateNeedShort) || needs.caps.some(capShort))
      return this.#takeRenewing(projectId, needs);
    const now = this.#o.now();
    takeRates(needs, now);
    return this.#holdCaps(projectId, needs, undefined, now);
  }

  async #takeRenewing(projectId: string, needs: LeaseNeeds): Promise<Taken> {
    const now = this.#o.now();
    const p = this.#project(projectId);
    while (needs.rates.some(rateNeedShort)) {
      const answer = await p.renew({ rates: needs.rates.filter(rateNeedShort), caps: [] });
      const refused = needs.rates.findIndex((n) => answer.rates.get(n.lease)?.retryMs);
      if (refused >= 0)
        return {
          ok: false,
          kind: 'rate',
          index: refused,
          retryMs: answer.rates.get(needs.rates[refused]!.lease)!.retryMs,
        };
    }
    takeRates(needs, now);
    // Leases granted one request's worth (near the cap) for this request: it holds them already.
    let claimed: Set<CapLease> | undefined;
    const short = (n: CapNeed): boolean => !claimed?.has(n.lease) && capShort(n);
    while (needs.caps.some(short)) {
      const asked = needs.caps.filter(short);
      const answer = await p.renew({ rates: [], caps: asked });
      const refused = needs.caps.findIndex((n) => answer.caps.get(n.lease)?.refused);
      if (refused >= 0) {
        if (claimed) for (const n of needs.caps) if (claimed.has(n.lease)) n.lease.inflight -= n.micros;
        const lease = needs.caps[refused]!.lease;
        return { ok: false, kind: 'cap', index: refused, spentMicros: answer.caps.get(lease)!.spent };
      }
      for (const n of asked)
        if (answer.caps.get(n.lease)?.claim()) {
          claimed ??= new Set();
          claimed.add(n.lease);
          n.lease.inflight += n.micros;
        }
    }
    return this.#holdCaps(projectId, needs, claimed, now);
  }

  /** Every cap's µUSD joins what runs on its lease (`claimed` ones hold it already). */
  #holdCaps(projectId: string, needs: LeaseNeeds, claimed: Set<CapLease> | undefined, now: number): Taken {
    let beyond = false;
    for (const n of needs.caps) {
      const l = n.lease;
      if (!claimed?.has(l)) l.inflight += n.micros;
      l.lastAdmitMs = now;
      l.lastNeed = n.micros;
      if (runsPastCommitment(l)) beyond = true;
    }
    // More runs than the store counts for a dead pod: it learns within this turn (a pod killed after
    // counts it). Within what was committed ahead, no call is needed.
    if (beyond) this.#project(projectId).dirty();
    return TAKEN;
  }

  /** A request admitted on `lease` ended: its estimate is released and its real cost recorded. */
  finish(lease: CapLease, estimate: number, actual: number, requestId: string): void {
    const after = capFinished(lease, estimate, actual);
    lease.inflight = after.inflight;
    lease.used = after.used;
    lease.lastRequestId = requestId;
    this.#project(lease.projectId).report();
  }

  /**
   * A limit's units moved by what a request really used minus what it took. Units it took and did
   * not use return to the lease, for the pod's next requests: they were taken from the limit once and
   * are used at most once, so the limit admits no more than it allows. With `max_tokens` set, as most
   * clients send it, nearly every request takes more than it uses, and this costs no call. What
   * would leave the lease holding more than a full lease (a second's worth of the limit) goes back
   * to the limit with a call at the end of the turn, so a slow limit is not hoarded by one pod. Units
   * a request used beyond its estimate are taken from the lease, or owed and taken with the next call.
   */
  correct(lease: RateLease, deltaUnits: number): void {
    if (deltaUnits === 0) return;
    lease.units = rateCorrected(lease.units, deltaUnits);
    if (rateGive(lease) !== 0) this.#project(lease.projectId).dirty();
  }

  /** The `x-ratelimit-*` view of a limit: what everybody has left, counting this pod's own units. */
  view(lease: RateLease): { remaining: number; resetMs: number } {
    const elapsed = this.#o.now() - lease.answeredAtMs;
    return {
      remaining: Math.max(0, lease.remaining + lease.units),
      resetMs: Math.max(0, lease.resetMs - elapsed),
    };
  }

  /** Gives every lease back (what is committed stays), and waits for the store to have it. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    for (const p of this.#projects.values()) await p.close();
  }

  /** Every third of the TTL: idle leases go back, running ones are kept alive. */
  #tick(): void {
    for (const p of this.#projects.values()) p.tick(this.#o.ttlMs / 3);
  }
}
