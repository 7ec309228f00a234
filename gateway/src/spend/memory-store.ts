import { absorbUsed, capGrant, expiredLease, heldAfterUse, rateGrant } from './lease-grants.ts';
import {
  type CapGrant,
  type CapOp,
  type CapPeek,
  type CapRef,
  type Crossing,
  type GuardStore,
  type LeaseInput,
  type LeaseResult,
  levelOf,
  type RateGrant,
  type RateOp,
} from './store.ts';

interface Lease {
  amount: number;
  committed: number;
  deadline: number;
}

interface CapCell {
  spent: number;
  /** Every member's lease together. */
  leased: number;
  /** member → its lease. */
  leases: Map<string, Lease>;
  /** member → what its expired lease was counted as, not yet absorbed by its reports. */
  expired: Map<string, number>;
  level: number;
  expireAtMs: number;
}

/**
 * Embedded mode's rate limits and caps, in process: the same rules as the Lua script (see
 * scripts.ts), the arithmetic in lease-grants.ts, with this process's clock standing in for Redis
 * TIME. One process is the only writer, so each call is atomic by running to completion without
 * awaiting.
 */
export class MemoryGuardStore implements GuardStore {
  readonly #now: () => number;
  readonly #tats = new Map<string, { tatUs: number; expiresUs: number }>();
  readonly #caps = new Map<string, CapCell>();
  #sweepAt = 0;

  constructor(now: () => number) {
    this.#now = now;
  }

  reachable(): boolean {
    return true;
  }

  async lease(input: LeaseInput): Promise<LeaseResult> {
    this.#sweep(input.nowMs);
    const nowUs = this.#now() * 1000;
    const rates = input.rates.map((op) => this.#rate(op, nowUs));
    const crossings: Crossing[] = [];
    const caps = input.caps.map((op, i) => this.#cap(op, i, input, crossings));
    return { rates, caps, crossings };
  }

  #rate(op: RateOp, nowUs: number): RateGrant {
    const { tatUs, ...grant } = rateGrant(op, this.#tat(op.rate.key, nowUs), nowUs);
    if (tatUs <= nowUs) this.#tats.delete(op.rate.key);
    else this.#tats.set(op.rate.key, { tatUs, expiresUs: tatUs });
    return grant;
  }

  #cap(op: CapOp, index: number, input: LeaseInput, crossings: Crossing[]): CapGrant {
    const cell = this.#cell(op.cap, input.nowMs);
    this.#expire(cell, input.nowMs);
    const before = cell.leases.get(input.member);
    let held = before?.amount ?? 0;
    if (op.used > 0) {
      const { spent, prepaidLeft } = absorbUsed(op.used, cell.expired.get(input.member) ?? 0);
      if (prepaidLeft === 0) cell.expired.delete(input.member);
      else cell.expired.set(input.member, prepaidLeft);
      cell.spent += spent;
      held = heldAfterUse(held, op.used);
    }
    this.#crossed(cell, op.cap, index, crossings);
    const others = cell.leased - (before?.amount ?? 0);
    const holders = cell.leases.size + (before ? 0 : 1);
    const { held: target, refused } = capGrant(op, {
      limitMicros: op.cap.limitMicros,
      spent: cell.spent,
      others,
      holders,
      held,
    });
    if (target > 0 || op.committed > 0)
      cell.leases.set(input.member, { amount: target, committed: op.committed, deadline: input.deadlineMs });
    else cell.leases.delete(input.member);
    cell.leased = others + target;
    cell.expireAtMs = Math.max(cell.expireAtMs, input.nowMs + op.cap.ttlSec * 1000);
    return { held: target, spent: cell.spent, leased: cell.leased, refused };
  }

  async peek(caps: readonly CapRef[]): Promise<CapPeek[]> {
    return caps.map((c) => {
      const cell = this.#caps.get(c.key);
      return {
        spent: cell?.spent ?? 0,
        leased: cell?.leased ?? 0,
        holders: cell?.leases.size ?? 0,
        level: cell?.level ?? 0,
      };
    });
  }

  /** Spent µUSD of a cap key, for tests and for status in embedded mode. */
  spent(key: string): number {
    return this.#caps.get(key)?.spent ?? 0;
  }

  /** µUSD leased on a cap key (by every member), not yet spent. */
  held(key: string): number {
    return this.#caps.get(key)?.leased ?? 0;
  }

  /** µUSD committed to requests in flight on a cap key, by every member. */
  committed(key: string): number {
    let n = 0;
    for (const l of this.#caps.get(key)?.leases.values() ?? []) n += l.committed;
    return n;
  }

  #tat(key: string, nowUs: number): number {
    const t = this.#tats.get(key);
    return t && t.expiresUs > nowUs ? t.tatUs : 0;
  }

  #cell(c: CapRef, nowMs: number): CapCell {
    let cell = this.#caps.get(c.key);
    if (!cell) {
      cell = {
        spent: 0,
        leased: 0,
        leases: new Map(),
        expired: new Map(),
        level: 0,
        expireAtMs: nowMs + c.ttlSec * 1000,
      };
      this.#caps.set(c.key, cell);
    }
    return cell;
  }

  /** A lease past its deadline counts what it had committed as spent; the rest returns. */
  #expire(cell: CapCell, nowMs: number): void {
    for (const [member, l] of cell.leases) {
      if (l.deadline > nowMs) continue;
      const { counted } = expiredLease(l.amount, l.committed);
      cell.leases.delete(member);
      cell.leased -= l.amount;
      cell.spent += counted;
      cell.expired.set(member, (cell.expired.get(member) ?? 0) + counted);
    }
  }

  #crossed(cell: CapCell, c: CapRef, index: number, out: Crossing[]): void {
    const level = levelOf(cell.spent, c.limitMicros);
    if (level > cell.level) {
      // A jump past several thresholds reports each of them.
      for (const l of [80, 90, 100] as const)
        if (l > cell.level && l <= level) out.push({ index, level: l, spentMicros: cell.spent });
      cell.level = level;
    }
  }

  /** Drops the keys of finished periods and idle limits, at most once a minute. */
  #sweep(nowMs: number): void {
    if (nowMs < this.#sweepAt) return;
    this.#sweepAt = nowMs + 60_000;
    for (const [k, cell] of this.#caps) if (cell.expireAtMs <= nowMs) this.#caps.delete(k);
    const nowUs = this.#now() * 1000;
    for (const [k, t] of this.#tats) if (t.expiresUs <= nowUs) this.#tats.delete(k);
  }
}
