import { defineScript, replies, type Script } from '#contract';
import type { StateClient } from '../state/connect.ts';
import { LEASE_LUA } from './scripts.ts';
import type {
  CapGrant,
  CapPeek,
  CapRef,
  Crossing,
  GuardStore,
  LeaseInput,
  LeaseResult,
  RateGrant,
} from './store.ts';

/** Rate limits and caps on Redis: a lease call is one EVALSHA on the shared auto-pipelined client. */
export class RedisGuardStore implements GuardStore {
  readonly #client: StateClient;
  readonly #lease: Script<number[]>;

  constructor(client: StateClient) {
    this.#client = client;
    this.#lease = defineScript(client, 'switchyardSpendLease', LEASE_LUA, replies.integers);
  }

  reachable(): boolean {
    return this.#client.status === 'ready';
  }

  async lease(input: LeaseInput): Promise<LeaseResult> {
    const keys: string[] = [];
    const args: Array<string | number> = [
      input.nowMs,
      input.member,
      input.deadlineMs,
      input.rates.length,
      input.caps.length,
    ];
    for (const r of input.rates) {
      keys.push(r.rate.key);
      args.push(r.rate.intervalUs, r.rate.burst, r.give, r.want, r.need);
    }
    for (const c of input.caps) {
      keys.push(c.cap.key, `${c.cap.key}:r`, `${c.cap.key}:d`);
      args.push(c.cap.limitMicros, c.cap.ttlSec, c.used, c.committed, c.want, c.need);
    }
    const flat = await this.#lease(keys, args);
    const rates: RateGrant[] = [];
    let i = 0;
    for (let n = 0; n < input.rates.length; n++, i += 4)
      rates.push({
        granted: flat[i]!,
        remaining: flat[i + 1]!,
        resetMs: flat[i + 2]!,
        retryMs: flat[i + 3]!,
      });
    const caps: CapGrant[] = [];
    for (let n = 0; n < input.caps.length; n++, i += 4)
      caps.push({ held: flat[i]!, spent: flat[i + 1]!, leased: flat[i + 2]!, refused: flat[i + 3] === 1 });
    const crossings: Crossing[] = [];
    for (; i + 2 < flat.length; i += 3)
      crossings.push({ index: flat[i]!, level: flat[i + 1] as Crossing['level'], spentMicros: flat[i + 2]! });
    return { rates, caps, crossings };
  }

  async peek(caps: readonly CapRef[]): Promise<CapPeek[]> {
    // Plain reads on the auto-pipelined client: one round trip for all of them.
    return Promise.all(
      caps.map(async (c) => {
        const [spent, lease] = await Promise.all([
          this.#client.get(c.key),
          this.#client.hmget(`${c.key}:r`, '_sum', '_h', '_t'),
        ]);
        const n = (v: string | null | undefined) => Math.max(0, Number.parseInt(v ?? '0', 10) || 0);
        return { spent: n(spent), leased: n(lease[0]), holders: n(lease[1]), level: n(lease[2]) };
      }),
    );
  }
}
