import { capReported, capUnsent, rateUnsent } from './lease-returns.ts';
import {
  type CallMode,
  capEmpty,
  capHolds,
  nearCap,
  planCap,
  planRate,
  rateForgotten,
  rateIdle,
  runsPastCommitment,
} from './lease-sizing.ts';
import {
  type CapLease,
  type LeaseCallKind,
  type LeaseNeeds,
  type LeasesOptions,
  LeasesUnavailableError,
  type RateLease,
} from './lease-types.ts';
import type { CapOp, LeaseInput, LeaseResult, RateOp } from './store.ts';

/** How soon what finished requests cost reaches the store's spent counter when nothing else calls. */
const REPORT_WITHIN_MS = 100;

/** The answer of a call, as a request waiting on it reads it. */
export interface Renewal {
  rates: Map<RateLease, { retryMs: number }>;
  /** `claim` takes a tight grant (one request's, near the cap) for the request that asked for it. */
  caps: Map<CapLease, { refused: boolean; spent: number; claim: () => boolean }>;
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

/**
 * One project's leases and its calls to the store: at most one call at a time, so each answer
 * applies to the state it was asked from. A request waiting is served at the end of the microtask
 * burst; reports go at the end of the event-loop turn, so one call carries a whole turn's worth.
 */
export class ProjectLeases {
  readonly caps = new Map<string, CapLease>();
  readonly rates = new Map<string, RateLease>();
  readonly #id: string;
  readonly #o: LeasesOptions;
  /** The pod is giving its leases back: nothing is committed ahead, no report is scheduled. */
  readonly #closed: () => boolean;
  #waiters: Waiter[] = [];
  /** Leases whose commitment or usage the store has not seen yet. */
  #dirty = false;
  /** Leases to shrink (idle) in the next call. */
  #releasing = false;
  #calling = false;
  #scheduled = false;
  #reportTimer: NodeJS.Timeout | undefined;

  constructor(id: string, o: LeasesOptions, closed: () => boolean) {
    this.#id = id;
    this.#o = o;
    this.#closed = closed;
  }

  /** Waits for a call carrying these needs (the next one, if one is under way). */
  renew(needs: LeaseNeeds): Promise<Renewal> {
    return new Promise((resolve, reject) => {
      this.#waiters.push({
        needs,
        reject,
        resolve: (result, sent) => {
          const answer: Renewal = { rates: new Map(), caps: new Map() };
          if (result && sent) {
            sent.rates.forEach((s, i) => {
              answer.rates.set(s.lease, { retryMs: result.rates[i]!.retryMs });
            });
            sent.caps.forEach((s, i) => {
              const g = result.caps[i]!;
              // A tight grant is one request's: the first waiter to claim it has it.
              const claim = (): boolean => {
                if (!s.tightGrant) return false;
                s.tightGrant = false;
                return true;
              };
              answer.caps.set(s.lease, { refused: g.refused, spent: g.spent, claim });
            });
          }
          resolve(answer);
        },
      });
      this.#schedule(true);
    });
  }

  /** The store is to hear of these leases within this turn. */
  dirty(): void {
    this.#dirty = true;
    this.#schedule(false);
  }

  /** Spent catches up within REPORT_WITHIN_MS (a pod killed before counts it as committed). */
  report(): void {
    if (this.#reportTimer || this.#closed()) return;
    this.#reportTimer = setTimeout(() => {
      this.#reportTimer = undefined;
      this.dirty();
    }, REPORT_WITHIN_MS);
    this.#reportTimer.unref();
  }

  /** Idle leases go back, running ones are kept alive. */
  tick(idleMs: number): void {
    this.#shrink(idleMs);
    if (this.#releasing) this.#schedule(false);
  }

  /** Gives every lease back (what is committed stays), and waits for the store to have it. */
  async close(): Promise<void> {
    clearTimeout(this.#reportTimer);
    this.#shrink(0);
    await this.#call().catch((err: unknown) =>
      this.#o.logger.warn({
        msg: 'spend: leases not given back at shutdown',
        project: this.#id,
        err: String(err),
      }),
    );
  }

  #schedule(urgent: boolean): void {
    if (this.#calling || this.#scheduled) return;
    this.#scheduled = true;
    const go = () => {
      this.#scheduled = false;
      void this.#call().catch(() => undefined);
    };
    if (urgent) queueMicrotask(go);
    else setImmediate(go);
  }

  async #call(): Promise<void> {
    if (this.#calling) return;
    const waiters = this.#waiters;
    if (!waiters.length && !this.#dirty && !this.#releasing) return;
    this.#calling = true;
    this.#waiters = [];
    this.#dirty = false;
    const mode: CallMode = {
      release: this.#releasing,
      closed: this.#closed(),
      nowMs: this.#o.now(),
      ttlMs: this.#o.ttlMs,
    };
    this.#releasing = false;
    const sent: Sent = { rates: [], caps: [] };
    const rateOps: RateOp[] = [];
    const capOps: CapOp[] = [];
    const rateNeed = new Map<RateLease, number>();
    const capNeed = new Map<CapLease, number>();
    for (const w of waiters) {
      for (const n of w.needs.rates) {
        rateNeed.set(n.lease, Math.max(rateNeed.get(n.lease) ?? 0, n.units));
        // A lease given up while a request was about to use it is this project's again.
        this.rates.set(n.lease.ref.key, n.lease);
      }
      for (const n of w.needs.caps) {
        capNeed.set(n.lease, Math.max(capNeed.get(n.lease) ?? 0, n.micros));
        this.caps.set(n.lease.ref.key, n.lease);
      }
    }
    for (const l of this.rates.values()) {
      const plan = planRate(l, rateNeed.get(l) ?? 0);
      if (!plan) continue;
      rateOps.push({ rate: l.ref, ...plan });
      sent.rates.push({ lease: l, give: plan.give });
      l.units -= plan.give;
    }
    for (const l of this.caps.values()) {
      const plan = planCap(l, capNeed.get(l) ?? 0, mode);
      if (!plan) continue;
      capOps.push({ cap: l.ref, used: l.used, committed: plan.committed, want: plan.want, need: plan.need });
      sent.caps.push({ lease: l, used: l.used, need: plan.need, tightGrant: false });
      l.committed = plan.committed;
      if (plan.shrink) l.ceiling = l.inflight;
    }
    for (const s of sent.caps) Object.assign(s.lease, capReported(s.lease, s.used));
    try {
      const result =
        rateOps.length || capOps.length
          ? await this.#lease(waiters.length ? 'renewal' : 'report', {
              member: this.#o.member,
              nowMs: mode.nowMs,
              deadlineMs: mode.nowMs + this.#o.ttlMs,
              rates: rateOps,
              caps: capOps,
            })
          : undefined;
      if (result) this.#apply(sent, result);
      for (const w of waiters) w.resolve(result, sent);
    } catch (err) {
      for (const s of sent.rates) s.lease.units = rateUnsent(s.lease.units, s.give);
      for (const s of sent.caps) Object.assign(s.lease, capUnsent(s.lease, s.used));
      this.#dirty = true;
      const unavailable = new LeasesUnavailableError(err);
      for (const w of waiters) w.reject(unavailable);
      this.#o.logger.warn({ msg: 'spend: lease call failed', project: this.#id, err: String(err) });
    } finally {
      this.#calling = false;
    }
    if (this.#waiters.length) this.#schedule(true);
    else if (this.#dirty && !this.#closed()) this.#schedule(false);
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

  #apply(sent: Sent, result: LeaseResult): void {
    const now = this.#o.now();
    sent.rates.forEach((s, i) => {
      const g = result.rates[i]!;
      const l = s.lease;
      l.units += g.granted;
      l.releasing = false;
      l.remaining = g.remaining;
      l.resetMs = g.resetMs;
      l.answeredAtMs = now;
      if (rateForgotten(l, now, this.#o.ttlMs)) this.rates.delete(l.ref.key);
    });
    sent.caps.forEach((s, i) => {
      const l = s.lease;
      const g = result.caps[i]!;
      if (s.need > 0 && !g.refused) {
        l.tight = nearCap(g.held, l.inflight, s.need);
        s.tightGrant = l.tight;
      }
      l.granted = g.held;
      l.ceiling = Number.POSITIVE_INFINITY;
      // Requests admitted while the call was under way may run past what it committed.
      if (runsPastCommitment(l)) this.#dirty = true;
      if (capEmpty(l)) this.caps.delete(l.ref.key);
    });
    this.#o.onAnswer?.(
      this.#id,
      sent.caps.map((s) => s.lease),
      result,
    );
  }

  /** Marks idle leases to be given back (down to what runs) in the next call. */
  #shrink(idleMs: number): void {
    const now = this.#o.now();
    let any = false;
    for (const l of this.rates.values())
      if (rateIdle(l, now, idleMs)) {
        l.releasing = true;
        any = true;
      }
    for (const l of this.caps.values()) if (capHolds(l)) any = true;
    if (any) this.#releasing = true;
  }
}
