import type { Logger } from 'pino';
import type { CapRule } from './rules.ts';
import {
  type CapOp,
  type GuardStore,
  KEEP,
  type LeaseInput,
  type LeaseResult,
  type RateOp,
  type RateRef,
} from './store.ts';
import type { CapInPeriod } from './thresholds.ts';

/** A pod's lease on one cap: what the store holds for it, and what its requests do with it. */
export interface CapLease {
  readonly projectId: string;
  ref: CapInPeriod;
  rule: CapRule;
  /** µUSD the store holds for this pod (as of its last answer). */
  granted: number;
  /** Estimates of admitted requests still running: what counts as spent if the pod dies. */
  inflight: number;
  /** What finished requests cost, not yet reported. */
  used: number;
  /**
   * What the store counts as spent should this pod die: its requests in flight and what finished
   * unreported, plus room for a few more, so the next ones need no call. Never below what runs.
   */
  committed: number;
  /** The estimate of the last request admitted on it (the unit of the room committed ahead). */
  lastNeed: number;
  /** While a call that may shrink the lease is under way: the most it can be assumed to hold. */
  ceiling: number;
  /**
   * Near the cap the store grants one request at a time: then every request asks it (it alone can
   * tell whether the cap is reached), and what the lease holds beyond them serves nobody else.
   */
  tight: boolean;
  lastAdmitMs: number;
  /** The last request that ended on it (named by the threshold events its report crosses). */
  lastRequestId?: string | undefined;
}

/** A pod's lease on one rate limit: units taken from the limit ahead of its requests. */
export interface RateLease {
  readonly projectId: string;
  ref: RateRef;
  /**
   * Units leased and not used (negative: used beyond the lease, owed to the limit). Units a request
   * took and did not use (a token estimate above the real count) come back here.
   */
  units: number;
  /** While units are being given back: none of them may be used. */
  releasing: boolean;
  /** What the limit had left for everybody, and its reset, at the last answer (for the headers). */
  remaining: number;
  resetMs: number;
  answeredAtMs: number;
  lastAdmitMs: number;
}

/** What a request asks of the leases: units of some limits, µUSD of some caps. */
export interface LeaseNeeds {
  rates: { lease: RateLease; units: number }[];
  caps: { lease: CapLease; micros: number }[];
}

export type Taken =
  | { ok: true }
  | { ok: false; kind: 'rate'; index: number; retryMs: number }
  | { ok: false; kind: 'cap'; index: number; spentMicros: number };

/** The store could not be reached for a lease call: admission follows the outage policy. */
export class LeasesUnavailableError extends Error {
  readonly code = 'LEASES_UNAVAILABLE';
  constructor(cause: unknown) {
    super(`spend and limit leases cannot be renewed: ${String(cause)}`, { cause });
    this.name = 'LeasesUnavailableError';
  }
}

interface Waiter {
  needs: LeaseNeeds;
  resolve: (result: LeaseResult | undefined, sent: Sent | undefined) => void;
  reject: (err: unknown) => void;
}

/** What one call carried, to apply its answer. */
interface Sent {
  rates: { lease: RateLease; give: number }[];
  caps: { lease: CapLease; used: number; need: number; tightGrant: boolean }[];
}

interface Project {
  caps: Map<string, CapLease>;
  rates: Map<string, RateLease>;
  waiters: Waiter[];
  /** Leases whose commitment or usage the store has not seen yet. */
  dirty: boolean;
  /** Leases to shrink (idle) in the next call. */
  releasing: boolean;
  calling: boolean;
  scheduled: boolean;
  reportTimer?: NodeJS.Timeout | undefined;
}

export interface LeasesOptions {
  store: GuardStore;
  /** This pod, as the store knows it (one lease per pod on each limit and cap). */
  member: string;
  now: () => number;
  logger: Logger;
  /** How long a lease outlives its pod's last call (then what it committed counts as spent). */
  ttlMs: number;
  /** The answer of every lease call, for reporting (crossings, spend gauges). */
  onAnswer?: (projectId: string, caps: readonly CapLease[], result: LeaseResult) => void;
  /**
   * Every call made to the store: `renewal` when a request waits for it, `report` when none does
   * (what finished requests cost, commitments, leases given back). For the lease-call counter.
   */
  onCall?: (kind: LeaseCallKind, ok: boolean) => void;
}

export type LeaseCallKind = 'renewal' | 'report';

type CapNeed = LeaseNeeds['caps'][number];
const rateShort = (n: LeaseNeeds['rates'][number]): boolean => n.lease.releasing || n.lease.units < n.units;
const capShort = (n: CapNeed): boolean => Leases.free(n.lease) < n.micros;
const TAKEN: Taken = Object.freeze({ ok: true });

function takeRates(needs: LeaseNeeds, now: number): void {
  for (const n of needs.rates) {
    n.lease.units -= n.units;
    n.lease.lastAdmitMs = now;
  }
}

/** µUSD of caps, and units of limits, a lease asks for beyond the request that needs it. */
const CAP_WANT_REQUESTS = 256;
/** Requests' worth a lease commits ahead of its requests, so a pod admits them without a call. */
const COMMIT_AHEAD_REQUESTS = 8;
/** How soon what finished requests cost reaches the store's spent counter when nothing else calls. */
const REPORT_WITHIN_MS = 100;
/** A rate lease asks for a second's worth of the limit (at least the request's units). */
const RATE_WANT_MS = 1000;
/** The most units a rate lease keeps between calls: what it asks for when it runs short. */
const rateWant = (l: RateLease): number => Math.floor((1000 / l.ref.intervalUs) * RATE_WANT_MS);
/**
 * Units a rate lease owes its limit (negative) or gives back to it: all of them while releasing,
 * otherwise what exceeds a full lease.
 */
const toGive = (l: RateLease): number =>
  l.releasing || l.units < 0 ? l.units : Math.max(0, l.units - rateWant(l));

/**
 * This pod's leases on rate limits and spend caps (docs/api.md, "Spend caps and rate
 * limits"): requests are admitted against them in process, and the store is called once per
 * project per event-loop turn at most, to report what finished requests cost and what running ones
 * commit, and to renew what ran out. Calls of one project never overlap, so each answer applies to
 * the state it was asked from. Idle leases are given back; a keepalive keeps running ones alive.
 */
export class Leases {
  readonly #o: LeasesOptions;
  readonly #projects = new Map<string, Project>();
  readonly #timer: NodeJS.Timeout;
  #closed = false;

  constructor(o: LeasesOptions) {
    this.#o = o;
    this.#timer = setInterval(() => this.#tick(), Math.max(50, Math.floor(o.ttlMs / 3)));
    this.#timer.unref();
  }

  #project(projectId: string): Project {
    let p = this.#projects.get(projectId);
    if (!p) {
      p = {
        caps: new Map(),
        rates: new Map(),
        waiters: [],
        dirty: false,
        releasing: false,
        calling: false,
        scheduled: false,
      };
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

  /** µUSD of a cap lease a request may still take without calling the store. */
  static free(l: CapLease): number {
    return l.tight ? 0 : Math.min(l.granted, l.ceiling) - l.inflight - l.used;
  }

  /**
   * Takes what a request needs: every limit's units or none (a refused limit takes nothing), then
   * every cap's µUSD or none (a refused cap leaves the limits' units taken). When every lease has
   * room, as for most requests, it answers at once: no store call, no promise. Otherwise it calls
   * the store for the leases that ran short, and the promise rejects with LeasesUnavailableError
   * when that call fails.
   */
  take(projectId: string, needs: LeaseNeeds): Taken | Promise<Taken> {
    if (needs.rates.some(rateShort) || needs.caps.some(capShort)) return this.#takeRenewing(projectId, needs);
    const now = this.#o.now();
    takeRates(needs, now);
    return this.#holdCaps(projectId, needs, undefined, now);
  }

  async #takeRenewing(projectId: string, needs: LeaseNeeds): Promise<Taken> {
    const now = this.#o.now();
    while (needs.rates.some(rateShort)) {
      const answer = await this.#renew(projectId, { rates: needs.rates.filter(rateShort), caps: [] });
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
      const answer = await this.#renew(projectId, { rates: [], caps: asked });
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
      if (l.inflight + l.used > l.committed) beyond = true;
    }
    // More runs than the store counts for a dead pod: it learns within this turn (a pod killed after
    // counts it). Within what was committed ahead, no call is needed.
    if (beyond) this.#dirty(projectId);
    return TAKEN;
  }

  /** A request admitted on `lease` ended: its estimate is released and its real cost recorded. */
  finish(lease: CapLease, estimate: number, actual: number, requestId: string): void {
    lease.inflight -= estimate;
    lease.used += actual;
    lease.lastRequestId = requestId;
    this.#report(lease.projectId);
  }

  /** Spent catches up within REPORT_WITHIN_MS (a pod killed before counts it as committed). */
  #report(projectId: string): void {
    const p = this.#project(projectId);
    if (p.reportTimer || this.#closed) return;
    p.reportTimer = setTimeout(() => {
      p.reportTimer = undefined;
      this.#dirty(projectId);
    }, REPORT_WITHIN_MS);
    p.reportTimer.unref();
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
    lease.units -= deltaUnits;
    if (toGive(lease) !== 0) this.#dirty(lease.projectId);
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
    for (const [id, p] of this.#projects) {
      clearTimeout(p.reportTimer);
      this.#shrink(p, 0);
      await this.#call(id).catch((err: unknown) =>
        this.#o.logger.warn({
          msg: 'spend: leases not given back at shutdown',
          project: id,
          err: String(err),
        }),
      );
    }
  }

  /** Waits for a call carrying these needs (the next one, if one is under way). */
  #renew(
    projectId: string,
    needs: LeaseNeeds,
  ): Promise<{
    rates: Map<RateLease, { retryMs: number }>;
    caps: Map<CapLease, { refused: boolean; spent: number; claim: () => boolean }>;
  }> {
    const p = this.#project(projectId);
    return new Promise((resolve, reject) => {
      p.waiters.push({
        needs,
        reject,
        resolve: (result, sent) => {
          const rates = new Map<RateLease, { retryMs: number }>();
          const caps = new Map<CapLease, { refused: boolean; spent: number; claim: () => boolean }>();
          if (result && sent) {
            sent.rates.forEach((s, i) => {
              rates.set(s.lease, { retryMs: result.rates[i]!.retryMs });
            });
            sent.caps.forEach((s, i) => {
              const g = result.caps[i]!;
              // A tight grant is one request's: the first waiter to claim it has it.
              const claim = (): boolean => {
                if (!s.tightGrant) return false;
                s.tightGrant = false;
                return true;
              };
              caps.set(s.lease, { refused: g.refused, spent: g.spent, claim });
            });
          }
          resolve({ rates, caps });
        },
      });
      this.#schedule(projectId, true);
    });
  }

  #dirty(projectId: string): void {
    const p = this.#project(projectId);
    p.dirty = true;
    this.#schedule(projectId, false);
  }

  /**
   * One call per project at a time. A waiting request is served at the end of this microtask burst;
   * reports go at the end of the event-loop turn, so one call carries a whole turn's worth.
   */
  #schedule(projectId: string, urgent: boolean): void {
    const p = this.#project(projectId);
    if (p.calling || p.scheduled) return;
    p.scheduled = true;
    const go = () => {
      p.scheduled = false;
      void this.#call(projectId).catch(() => undefined);
    };
    if (urgent) queueMicrotask(go);
    else setImmediate(go);
  }

  async #call(projectId: string): Promise<void> {
    const p = this.#project(projectId);
    if (p.calling) return;
    const waiters = p.waiters;
    if (!waiters.length && !p.dirty && !p.releasing) return;
    p.calling = true;
    p.waiters = [];
    p.dirty = false;
    const release = p.releasing;
    p.releasing = false;
    const now = this.#o.now();
    const sent: Sent = { rates: [], caps: [] };
    const rateOps: RateOp[] = [];
    const capOps: CapOp[] = [];
    const rateNeed = new Map<RateLease, number>();
    const capNeed = new Map<CapLease, number>();
    for (const w of waiters) {
      for (const n of w.needs.rates) {
        rateNeed.set(n.lease, Math.max(rateNeed.get(n.lease) ?? 0, n.units));
        // A lease given up while a request was about to use it is this project's again.
        p.rates.set(n.lease.ref.key, n.lease);
      }
      for (const n of w.needs.caps) {
        capNeed.set(n.lease, Math.max(capNeed.get(n.lease) ?? 0, n.micros));
        p.caps.set(n.lease.ref.key, n.lease);
      }
    }
    for (const l of p.rates.values()) {
      const need = rateNeed.get(l) ?? 0;
      const give = toGive(l);
      if (!need && give === 0) continue;
      rateOps.push({
        rate: l.ref,
        give,
        need,
        want: need ? Math.max(need, rateWant(l)) : 0,
      });
      sent.rates.push({ lease: l, give });
      l.units -= give;
    }
    for (const l of p.caps.values()) {
      const need = capNeed.get(l) ?? 0;
      const shrink = release && need === 0 && (this.#closed || l.lastAdmitMs < now - this.#o.ttlMs / 3);
      if (!need && !shrink && l.used === 0 && !l.inflight && l.granted === 0) continue;
      const want = need ? need * CAP_WANT_REQUESTS : shrink ? 0 : KEEP;
      // A report commits a few more requests' worth than runs, within what the lease holds; a call
      // that asks for room commits exactly what runs (the store grants on top of it, near the cap too).
      const ahead = need || shrink || l.tight || this.#closed ? 0 : COMMIT_AHEAD_REQUESTS * l.lastNeed;
      const committed = Math.max(l.inflight, Math.min(Math.max(0, l.granted - l.used), l.inflight + ahead));
      capOps.push({ cap: l.ref, used: l.used, committed, want, need });
      sent.caps.push({ lease: l, used: l.used, need, tightGrant: false });
      l.committed = committed;
      if (shrink) l.ceiling = l.inflight;
    }
    // What is reported leaves the lease now, as the store will take it out: the lease stays exact
    // for requests admitted while the call is under way.
    for (const s of sent.caps) {
      s.lease.used -= s.used;
      s.lease.granted = Math.max(0, s.lease.granted - s.used);
    }
    try {
      const result =
        rateOps.length || capOps.length
          ? await this.#lease(waiters.length ? 'renewal' : 'report', {
              member: this.#o.member,
              nowMs: now,
              deadlineMs: now + this.#o.ttlMs,
              rates: rateOps,
              caps: capOps,
            })
          : undefined;
      if (result) this.#apply(projectId, p, sent, result);
      for (const w of waiters) w.resolve(result, sent);
    } catch (err) {
      // Nothing was applied: what was sent is owed again (the next call carries it).
      for (const s of sent.rates) {
        s.lease.units += s.give;
      }
      for (const s of sent.caps) {
        s.lease.used += s.used;
        s.lease.granted += s.used;
        s.lease.ceiling = Number.POSITIVE_INFINITY;
        // The store may still count the earlier commitment, or this one: assume the smaller.
        s.lease.committed = 0;
      }
      p.dirty = true;
      const unavailable = new LeasesUnavailableError(err);
      for (const w of waiters) w.reject(unavailable);
      this.#o.logger.warn({ msg: 'spend: lease call failed', project: projectId, err: String(err) });
    } finally {
      p.calling = false;
    }
    if (p.waiters.length) this.#schedule(projectId, true);
    else if (p.dirty && !this.#closed) this.#schedule(projectId, false);
  }

  /** The store's lease call, counted by kind and outcome. */
  async #lease(kind: LeaseCallKind, req: LeaseInput): Promise<LeaseResult> {
    try {
      const result = await this.#o.store.lease(req);
      this.#o.onCall?.(kind, true);
      return result;
    } catch (err) {
      this.#o.onCall?.(kind, false);
      throw err;
    }
  }

  #apply(projectId: string, p: Project, sent: Sent, result: LeaseResult): void {
    const now = this.#o.now();
    sent.rates.forEach((s, i) => {
      const g = result.rates[i]!;
      const l = s.lease;
      l.units += g.granted;
      l.releasing = false;
      l.remaining = g.remaining;
      l.resetMs = g.resetMs;
      l.answeredAtMs = now;
      if (l.units === 0 && l.lastAdmitMs < now - this.#o.ttlMs) p.rates.delete(l.ref.key);
    });
    sent.caps.forEach((s, i) => {
      const l = s.lease;
      const g = result.caps[i]!;
      if (s.need > 0 && !g.refused) {
        // Less than two requests' worth beyond what runs: the store is near the cap.
        l.tight = g.held - l.inflight < 2 * s.need;
        s.tightGrant = l.tight;
      }
      l.granted = g.held;
      l.ceiling = Number.POSITIVE_INFINITY;
      // Requests admitted while the call was under way may run past what it committed.
      if (l.inflight + l.used > l.committed) p.dirty = true;
      if (l.granted === 0 && l.inflight === 0 && l.used === 0) p.caps.delete(l.ref.key);
    });
    this.#o.onAnswer?.(
      projectId,
      sent.caps.map((s) => s.lease),
      result,
    );
  }

  /** Marks idle leases of a project to be given back (down to what runs) in its next call. */
  #shrink(p: Project, idleMs: number): void {
    const now = this.#o.now();
    let any = false;
    for (const l of p.rates.values())
      if (l.units > 0 && l.lastAdmitMs <= now - idleMs) {
        l.releasing = true;
        any = true;
      }
    for (const l of p.caps.values()) if (l.granted > l.inflight || l.inflight > 0) any = true;
    if (any) p.releasing = true;
  }

  /** Every third of the TTL: idle leases go back, running ones are kept alive. */
  #tick(): void {
    for (const [id, p] of this.#projects) {
      this.#shrink(p, this.#o.ttlMs / 3);
      if (p.releasing) this.#schedule(id, false);
    }
  }
}
