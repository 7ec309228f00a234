import {
  type CapRef,
  type Crossing,
  type GuardStore,
  levelOf,
  type RateRef,
  type RateState,
  type ReserveInput,
  type ReserveResult,
  type Settled,
  type SettleInput,
} from './store.ts';

interface CapCell {
  spent: number;
  reserved: number;
  /** member → reserved µUSD and deadline (ms). */
  held: Map<string, { amount: number; deadline: number }>;
  /** member → what its expired reservation was counted as. */
  expired: Map<string, number>;
  level: number;
  expireAtMs: number;
}

/**
 * Embedded mode's rate limits and caps, in process: the same rules as the Redis scripts (see
 * scripts.ts), with this process's clock standing in for Redis TIME. One process is the only writer,
 * so each method is atomic by running to completion without awaiting.
 */
export class MemoryGuardStore implements GuardStore {
  readonly #now: () => number;
  readonly #tats = new Map<string, { tatUs: number; expiresUs: number }>();
  readonly #caps = new Map<string, CapCell>();
  #sweepAt = 0;

  constructor(now: () => number) {
    this.#now = now;
  }

  async reserve(input: ReserveInput): Promise<ReserveResult> {
    this.#sweep(input.nowMs);
    if (input.rates.length) {
      const nowUs = this.#now() * 1000;
      const tats = input.rates.map((r) => Math.max(this.#tat(r.key, nowUs), nowUs));
      const next = input.rates.map((r, i) => tats[i]! + r.intervalUs * r.cost);
      const refused = input.rates.findIndex((r, i) => nowUs - (next[i]! - r.intervalUs * r.burst) < 0);
      if (refused >= 0) {
        const r = input.rates[refused]!;
        const retryMs = Math.ceil((next[refused]! - r.intervalUs * r.burst - nowUs) / 1000);
        // Nothing is taken: what each limit has left now.
        const rates = input.rates.map((l, i) => ({
          remaining: Math.max(0, Math.floor((l.intervalUs * l.burst - (tats[i]! - nowUs)) / l.intervalUs)),
          resetMs: Math.ceil((tats[i]! - nowUs) / 1000),
        }));
        return { ok: false, kind: 'rate', index: refused, retryMs, rates };
      }
      const rates: RateState[] = input.rates.map((l, i) => ({
        remaining: Math.max(0, Math.floor((nowUs - (next[i]! - l.intervalUs * l.burst)) / l.intervalUs)),
        resetMs: Math.ceil((next[i]! - nowUs) / 1000),
      }));
      input.rates.forEach((r, i) => {
        this.#tats.set(r.key, { tatUs: next[i]!, expiresUs: next[i]! });
      });
      return this.#reserveCaps(input, rates);
    }
    return this.#reserveCaps(input, []);
  }

  #reserveCaps(input: ReserveInput, rates: RateState[]): ReserveResult {
    const crossings: Crossing[] = [];
    const cells = input.caps.map((c) => this.#cell(c, input.nowMs));
    for (let i = 0; i < cells.length; i++) {
      const cell = cells[i]!;
      this.#expire(cell, input.nowMs);
      this.#crossed(cell, input.caps[i]!, i, crossings);
      if (cell.spent + cell.reserved >= input.caps[i]!.limitMicros)
        return {
          ok: false,
          kind: 'cap',
          index: i,
          spentMicros: cell.spent,
          reservedMicros: cell.reserved,
          crossings,
        };
    }
    for (const cell of cells) {
      const held = cell.held.get(input.member);
      cell.held.set(input.member, {
        amount: (held?.amount ?? 0) + input.amountMicros,
        deadline: input.deadlineMs,
      });
      cell.reserved += input.amountMicros;
    }
    return { ok: true, rates, crossings };
  }

  async settle(input: SettleInput): Promise<Settled> {
    const crossings: Crossing[] = [];
    const spent: (number | null)[] = [];
    input.caps.forEach((c, i) => {
      spent.push(null);
      const cell = this.#caps.get(c.key);
      if (!cell) return;
      const held = cell.held.get(input.member);
      let delta: number | undefined;
      if (held) {
        cell.held.delete(input.member);
        cell.reserved -= held.amount;
        delta = c.actualMicros;
      } else {
        const counted = cell.expired.get(input.member);
        if (counted !== undefined) {
          cell.expired.delete(input.member);
          delta = c.actualMicros - counted;
        }
      }
      if (delta === undefined) return;
      cell.spent += delta;
      spent[i] = cell.spent;
      this.#crossed(cell, c, i, crossings);
    });
    for (const c of input.corrections ?? []) this.#correct(c.rate, c.deltaUnits);
    return { spent, crossings };
  }

  #correct(rate: RateRef, deltaUnits: number): void {
    const t = this.#tats.get(rate.key);
    if (!t || deltaUnits === 0) return;
    const nowUs = this.#now() * 1000;
    const nt = t.tatUs + rate.intervalUs * deltaUnits;
    if (nt <= nowUs) this.#tats.delete(rate.key);
    else this.#tats.set(rate.key, { tatUs: nt, expiresUs: nt });
  }

  /** Spent µUSD of a cap key, for tests and for status in embedded mode. */
  spent(key: string): number {
    return this.#caps.get(key)?.spent ?? 0;
  }

  /** µUSD reserved on a cap key and not yet settled. */
  held(key: string): number {
    return this.#caps.get(key)?.reserved ?? 0;
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
        reserved: 0,
        held: new Map(),
        expired: new Map(),
        level: 0,
        expireAtMs: nowMs + c.ttlSec * 1000,
      };
      this.#caps.set(c.key, cell);
    }
    return cell;
  }

  #expire(cell: CapCell, nowMs: number): void {
    for (const [member, h] of cell.held) {
      if (h.deadline > nowMs) continue;
      cell.held.delete(member);
      cell.reserved -= h.amount;
      cell.spent += h.amount;
      cell.expired.set(member, h.amount);
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
