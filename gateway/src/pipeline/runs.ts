import type { Logger } from 'pino';
import { GatewayError } from '../errors/index.ts';
import type { CanonicalResult } from '../providers/types.ts';
import type { SlotGuard } from '../routing/plan.ts';
import type { RuntimeSlot } from '../snapshot/runtime.ts';
import type { Exchange } from './exchange.ts';
import type { Durable, Feature, FeatureRun, ReviewedStream, RunEnd } from './feature.ts';
import type { Prepared } from './prepare.ts';
import type { Notes } from './result.ts';

/**
 * The feature runs of one exchange: begun in the declared order, finished exactly once, in reverse.
 * If a feature's `begin` throws, the runs already begun are finished as refused before the error
 * goes on, so nothing they reserved is left behind.
 */
export class Runs {
  readonly #runs: FeatureRun[];
  readonly #logger: Logger;
  #finished = false;
  readonly notes: Notes;
  readonly prepared: Prepared;

  private constructor(runs: FeatureRun[], notes: Notes, prepared: Prepared, logger: Logger) {
    this.#runs = runs;
    this.notes = notes;
    this.prepared = prepared;
    this.#logger = logger;
  }

  static async begin(
    features: readonly Feature[],
    ex: Exchange,
    prepared: Prepared,
    logger: Logger,
  ): Promise<Runs> {
    const runs: FeatureRun[] = [];
    // Notes reach the exchange only once every feature has begun: a refusal in `begin` reports
    // none, whichever feature refused (so the declared order of independent features shows nowhere).
    const notes: Notes = {};
    let p = prepared;
    const providerOptional = features.some((f) => f.mayAnswer?.(ex, p) === true);
    for (const f of features) {
      let run: FeatureRun | undefined;
      try {
        // Features with nothing to do answer synchronously: no await, no microtask.
        const begun = f.begin({ ex, p, providerOptional });
        run = begun instanceof Promise ? await begun : begun;
      } catch (err) {
        new Runs(runs, notes, p, logger).finishRefused(err);
        throw err;
      }
      if (!run) continue;
      runs.push(run);
      if (run.notes) Object.assign(notes, run.notes);
      if (run.request) p = { ...p, request: run.request };
    }
    Object.assign(ex.progress.notes, notes);
    return new Runs(runs, ex.progress.notes, p, logger);
  }

  /** The first answer a feature gave without a provider. */
  get answer(): CanonicalResult | undefined {
    for (const r of this.#runs) if (r.answer) return r.answer;
    return undefined;
  }

  /** The answer as the runs let it through (a run may mask it, or throw to refuse it). */
  async review(result: CanonicalResult): Promise<CanonicalResult> {
    let out = result;
    for (const r of this.#runs) if (r.review) out = await r.review(out);
    return out;
  }

  /** Whether some run reviews answers (so an answer without one costs no promise). */
  get reviews(): boolean {
    return this.#runs.some((r) => r.review !== undefined);
  }

  /** A stream's events as the runs let them through. */
  reviewStream<S extends ReviewedStream>(opened: S): S {
    let out = opened;
    for (const r of this.#runs) if (r.reviewStream) out = { ...out, ...r.reviewStream(out) };
    return out;
  }

  /** The request will reach a provider: every run may still refuse it; their slot guards as one. */
  toChain(p: Prepared): SlotGuard | undefined {
    const guards: SlotGuard[] = [];
    for (const r of this.#runs) {
      const g = r.toChain?.(p);
      if (g) guards.push(g);
    }
    return guards.length > 1 ? allOf(guards) : guards[0];
  }

  /** Tells every run how the exchange ended (once); resolves when the writes the answer waits for are done. */
  finish(end: RunEnd): Durable {
    if (this.#finished) return undefined;
    this.#finished = true;
    const waits: Promise<void>[] = [];
    for (let i = this.#runs.length - 1; i >= 0; i--) {
      let d: Durable;
      try {
        d = this.#runs[i]!.finish(end);
      } catch (err) {
        this.#logger.error({ msg: 'a feature failed to finish an exchange', err: String(err) });
      }
      if (d) waits.push(d);
    }
    if (waits.length === 0) return undefined;
    return waits.length === 1 ? waits[0] : Promise.all(waits).then(() => undefined);
  }

  /** A `begin` or a later stage threw: what the runs hold is given back (a failure of ours alike). */
  finishRefused(err: unknown): void {
    const error =
      err instanceof GatewayError
        ? err
        : new GatewayError('service_unavailable', 'The gateway failed to handle the request.', {
            cause: err,
          });
    void this.finish({ kind: 'refused', error });
  }
}

/** Guards in order: the first that skips a slot wins, and the ones before it give back that slot. */
function allOf(guards: SlotGuard[]): SlotGuard {
  return {
    async check(slot: RuntimeSlot) {
      for (let i = 0; i < guards.length; i++) {
        const v = (await guards[i]!.check?.(slot)) ?? { skip: false as const };
        if (v.skip) {
          for (let j = 0; j < i; j++) guards[j]!.release?.(slot);
          return v;
        }
      }
      return { skip: false };
    },
    release(slot: RuntimeSlot) {
      for (const g of guards) g.release?.(slot);
    },
    stream(slot: RuntimeSlot) {
      for (const g of guards) {
        const b = g.stream?.(slot);
        if (b) return b;
      }
      return undefined;
    },
  };
}
