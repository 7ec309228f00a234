import { defineScript, replies, type Script } from '#contract';
import type { StateClient } from '../state/connect.ts';
import { RESERVE_LUA, SETTLE_LUA } from './scripts.ts';
import type {
  CapRef,
  Crossing,
  GuardStore,
  RateState,
  ReserveInput,
  ReserveResult,
  Settled,
  SettleInput,
} from './store.ts';

const capKeys = (caps: readonly CapRef[]): string[] =>
  caps.flatMap((c) => [c.key, `${c.key}:r`, `${c.key}:d`]);

function crossingsFrom(flat: readonly number[], from: number): Crossing[] {
  const out: Crossing[] = [];
  for (let i = from; i + 2 < flat.length; i += 3)
    out.push({ index: flat[i]!, level: flat[i + 1] as Crossing['level'], spentMicros: flat[i + 2]! });
  return out;
}

function ratesFrom(flat: readonly number[], from: number, n: number): RateState[] {
  const out: RateState[] = [];
  for (let i = 0; i < n; i++) out.push({ remaining: flat[from + i * 2]!, resetMs: flat[from + i * 2 + 1]! });
  return out;
}

/**
 * Rate limits and caps on Redis: a request's admission is one EVALSHA and its settle another, on
 * the shared auto-pipelined client (so the settle travels with the request-log write of the same tick).
 */
export class RedisGuardStore implements GuardStore {
  readonly #reserve: Script<number[]>;
  readonly #settle: Script<number[]>;

  constructor(client: StateClient) {
    this.#reserve = defineScript(client, 'switchyardSpendReserve', RESERVE_LUA, replies.integers);
    this.#settle = defineScript(client, 'switchyardSpendSettle', SETTLE_LUA, replies.integers);
  }

  async reserve(input: ReserveInput): Promise<ReserveResult> {
    const keys = [...input.rates.map((r) => r.key), ...capKeys(input.caps)];
    const args: Array<string | number> = [
      input.nowMs,
      input.member,
      input.amountMicros,
      input.deadlineMs,
      input.rates.length,
      input.caps.length,
    ];
    for (const r of input.rates) args.push(r.intervalUs, r.burst, r.cost);
    for (const c of input.caps) args.push(c.limitMicros, c.ttlSec);
    const flat = await this.#reserve(keys, args);
    const n = input.rates.length;
    switch (flat[0]) {
      case 0:
        return { ok: true, rates: ratesFrom(flat, 1, n), crossings: crossingsFrom(flat, 1 + n * 2) };
      case 1:
        return {
          ok: false,
          kind: 'rate',
          index: flat[1]! - 1,
          retryMs: flat[2]!,
          rates: ratesFrom(flat, 3, n),
        };
      default:
        return {
          ok: false,
          kind: 'cap',
          index: flat[1]!,
          spentMicros: flat[2]!,
          reservedMicros: flat[3]!,
          crossings: crossingsFrom(flat, 4),
        };
    }
  }

  async settle(input: SettleInput): Promise<Settled> {
    const n = input.caps.length;
    const corrections = input.corrections?.filter((c) => c.deltaUnits !== 0) ?? [];
    if (!n && !corrections.length) return { spent: [], crossings: [] };
    const keys = [...capKeys(input.caps), ...corrections.map((c) => c.rate.key)];
    const args: Array<string | number> = [input.member, input.nowMs, n];
    for (const c of input.caps) args.push(c.limitMicros, c.ttlSec, c.actualMicros);
    for (const c of corrections) args.push(c.rate.intervalUs, c.deltaUnits);
    const flat = await this.#settle(keys, args);
    return {
      spent: flat.slice(0, n).map((v) => (v < 0 ? null : v)),
      crossings: crossingsFrom(flat, n),
    };
  }
}
