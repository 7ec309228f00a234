import type { RateLimit } from '../limits/rates.ts';
import type { HeldCaps, SpendContext } from './context.ts';
import type { CapRule } from './rules.ts';
import type { CapSettle, RateCorrection } from './store.ts';
import type { CapInPeriod } from './thresholds.ts';

/** Token limits moved by what the request really used (`real`) minus what it took at admission. */
export const corrected = (limits: readonly RateLimit[], real: number): RateCorrection[] =>
  limits.map((l) => ({ rate: l.ref, deltaUnits: real - l.ref.cost }));

/**
 * What one exchange still has to write to its caps and limits. Everything queued in one tick (the
 * answering slot's caps, the project caps, the token corrections) goes out as ONE store call, so a
 * request costs two: its admission and its settle. Fire and forget: it travels with the log write.
 */
export class Settlement {
  readonly #ctx: SpendContext;
  readonly #member: string;
  readonly #project: { id: string; logCap: number };
  #rules: CapRule[] = [];
  #caps: (CapSettle & CapInPeriod)[] = [];
  #corrections: RateCorrection[] = [];
  #scheduled = false;

  constructor(ctx: SpendContext, member: string, project: { id: string; logCap: number }) {
    this.#ctx = ctx;
    this.#member = member;
    this.#project = project;
  }

  /** Replaces the reservation on `held` with `actual` µUSD (0 gives it back). */
  caps(held: HeldCaps | undefined, actual: number): void {
    if (!held) return;
    held.caps.forEach((c, i) => {
      this.#rules.push(held.rules[i]!);
      this.#caps.push({ ...c, actualMicros: actual });
    });
    this.#schedule();
  }

  /** Corrects token limits (corrections of zero are not sent). */
  tokens(corrections: readonly RateCorrection[]): void {
    for (const c of corrections) if (c.deltaUnits !== 0) this.#corrections.push(c);
    this.#schedule();
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    queueMicrotask(() => this.#flush());
  }

  #flush(): void {
    this.#scheduled = false;
    const rules = this.#rules;
    const caps = this.#caps;
    const corrections = this.#corrections;
    if (!caps.length && !corrections.length) return;
    this.#rules = [];
    this.#caps = [];
    this.#corrections = [];
    const { reporter, logger } = this.#ctx;
    const p = this.#project;
    this.#ctx.store
      .settle({ member: this.#member, nowMs: this.#ctx.now(), caps, corrections })
      .then((s) => {
        s.spent.forEach((v, i) => {
          if (v !== null) reporter.used(p.id, rules[i]!, v);
        });
        reporter.crossed(p.id, p.logCap, this.#member, rules, caps, s.crossings);
      })
      .catch((err: unknown) => logger.warn({ msg: 'spend: settle failed', err: String(err) }));
  }
}
