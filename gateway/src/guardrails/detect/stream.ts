import { Compiled, type CompiledRules, sortFindings } from './compile.ts';
import { isMaskable, redact } from './redact.ts';
import type { Candidate, Direction, Finding } from './types.ts';
import { type ScoreState, sizeFinding, type Unit, walk } from './units.ts';

export interface StreamStep {
  /** Text safe to send now, redacted. */
  emit: string;
  /** Findings decided by this step (offsets into the whole stream's text). */
  findings: Finding[];
}

export interface StreamOptions {
  /** Which findings are masked in the emitted text; by default those of `redact`-mode rules. */
  redact?: (f: Finding) => boolean;
  /**
   * New characters to gather before a step rescans the held-back window (default: half the
   * hold-back, at least 64). Smaller emits sooner and costs more CPU; every chunk still goes through
   * at `end()`. A size limit crossed is reported at once regardless.
   */
  batch?: number;
}

/** Span units never read their score state. */
const NO_SCORE: ScoreState = { score: 0, first: -1, done: true };
const isHighSurrogate = (c: number): boolean => c >= 0xd800 && c <= 0xdbff;

/**
 * Scans a text that arrives in chunks and emits it redacted, as early as it is safe: a match can
 * only start where every rule's scan has not yet decided, so text before that point (and not inside
 * a pending finding) goes out; the rest is held back, at most `holdBack` characters plus whatever a
 * pending finding spans. The concatenated output equals `redact(text, scan(text))` restricted to the
 * chosen findings, and the findings are the same as `scan` reports, for any split of the text.
 */
export class StreamScanner {
  readonly #rules: Compiled;
  readonly #units: Unit[];
  readonly #direction: Direction;
  readonly #shouldRedact: (f: Finding) => boolean;
  #buffer = '';
  #base = 0;
  #emitted = 0;
  #total = 0;
  #ended = false;
  readonly #resume: Int32Array;
  /** Score units' running totals, made on their first hit. */
  readonly #scores: (ScoreState | undefined)[] = [];
  readonly #sizeReported: Uint8Array;
  #pending: Finding[] = [];
  /** Where the last step's scan ended (absolute), and how much new text triggers the next step. */
  #scanned = 0;
  readonly #batch: number;
  readonly #sizeUnits: number[];

  constructor(rules: CompiledRules, direction: Direction, options: StreamOptions = {}) {
    if (!(rules instanceof Compiled)) throw new TypeError('StreamScanner needs rules from compileRules');
    this.#rules = rules;
    this.#direction = direction;
    this.#units = rules.unitsFor(direction);
    this.#shouldRedact = options.redact ?? ((f) => f.mode === 'redact');
    this.#resume = new Int32Array(this.#units.length);
    this.#sizeReported = new Uint8Array(this.#units.length);
    this.#sizeUnits = rules.sizeUnitsFor(direction);
    this.#batch = options.batch ?? Math.max(64, Math.ceil(rules.holdBack / 2));
  }

  push(chunk: string): StreamStep {
    if (this.#ended) throw new Error('StreamScanner: push after end');
    this.#buffer += chunk;
    this.#total += chunk.length;
    // Each step rescans the held-back window; waiting for a batch of new text keeps that cost near
    // one pass over the stream. A size limit crossed is reported at once all the same.
    const fresh = this.#base + this.#buffer.length - this.#scanned;
    if (fresh < this.#batch && !this.#sizeCrossed()) return { emit: '', findings: [] };
    return this.#step(false);
  }

  #sizeCrossed(): boolean {
    for (const i of this.#sizeUnits) {
      const u = this.#units[i]!;
      const max = u.kind === 'size' ? u.max[this.#direction] : undefined;
      if (!this.#sizeReported[i] && max !== undefined && this.#total > max) return true;
    }
    return false;
  }

  end(): StreamStep {
    if (this.#ended) return { emit: '', findings: [] };
    const step = this.#step(true);
    this.#ended = true;
    return step;
  }

  #step(final: boolean): StreamStep {
    const found: Finding[] = [];
    const buffer = this.#buffer;
    const base = this.#base;
    this.#scanned = base + buffer.length;
    let safe = base + buffer.length;
    const taken: Candidate[] = [];
    for (let i = 0; i < this.#units.length; i++) {
      const unit = this.#units[i]!;
      if (unit.kind === 'size') {
        const max = unit.max[this.#direction];
        if (max !== undefined && this.#total > max && !this.#sizeReported[i]) {
          this.#sizeReported[i] = 1;
          found.push(sizeFinding(unit, this.#total));
        }
        continue;
      }
      taken.length = 0;
      const resume = walk(unit.matcher, buffer, this.#resume[i]! - base, final, taken);
      if (taken.length > 0) {
        if (unit.kind === 'score') this.#scores[i] ??= { score: 0, first: -1, done: false };
        const state = this.#scores[i] ?? NO_SCORE;
        for (const c of taken) this.#rules.take(unit, buffer, c.hits, state, base, found);
      }
      this.#resume[i] = resume + base;
      if (resume + base < safe) safe = resume + base;
    }
    sortFindings(found);
    for (const f of found) if (isMaskable(f) && this.#shouldRedact(f)) this.#pending.push(f);

    // Never cut inside a pending finding (or a chain of overlapping ones), nor inside a surrogate pair.
    let moved = true;
    while (moved) {
      moved = false;
      for (const f of this.#pending)
        if (f.start < safe && f.end > safe) {
          safe = f.start;
          moved = true;
        }
    }
    if (!final && safe > this.#emitted && isHighSurrogate(buffer.charCodeAt(safe - 1 - base))) safe--;
    if (safe < this.#emitted) safe = this.#emitted;

    const ready = this.#pending.filter((f) => f.end <= safe);
    this.#pending = this.#pending.filter((f) => f.end > safe);
    const segment = buffer.slice(this.#emitted - base, safe - base);
    const emit = redact(
      segment,
      ready.map((f) => ({ ...f, start: f.start - this.#emitted, end: f.end - this.#emitted })),
    );
    this.#emitted = safe;

    let keep = this.#emitted;
    for (const r of this.#resume) keep = Math.min(keep, r - this.#rules.behind);
    keep = Math.max(base, keep);
    this.#buffer = buffer.slice(keep - base);
    this.#base = keep;
    return { emit, findings: found };
  }
}
