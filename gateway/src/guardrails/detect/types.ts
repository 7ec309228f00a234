import type { GuardrailDetector, GuardrailMode } from '#contract';

/** One thing a rule found. Carries where and what kind, never the value itself. */
export interface Finding {
  rule: string;
  detector: GuardrailDetector['type'];
  mode: GuardrailMode;
  /** Placeholder type: CARD, IBAN, PHONE, EMAIL, SECRET, US_SSN, a pattern's label, DENY, SIZE, INJECTION. */
  label: string;
  /** UTF-16 offsets into the scanned text. */
  start: number;
  end: number;
  /** sha-256 hex of the matched value, first 16 characters: lets logs correlate without the value. */
  hash: string;
}

export type Direction = 'input' | 'output';

/** A span inside a candidate that is reported (a candidate may be checked and rejected: no hits). */
export interface Hit {
  start: number;
  end: number;
}

/**
 * One step of a detector's left-to-right scan: the next place its search stopped. `end` is where the
 * scan resumes, `hits` what it reports (empty when validation rejected the candidate).
 */
export interface Candidate {
  start: number;
  end: number;
  hits: Hit[];
}

/**
 * A detector as the engine drives it. `next(text, from)` finds the first candidate starting at or
 * after `from`; it may look at most `behind` characters before a candidate's start and must decide
 * using no more than `reach` characters from the start. Those two bounds are what let a stream
 * decide a candidate from a window of the text and get the same answer as the whole text.
 */
export interface SpanMatcher {
  readonly reach: number;
  readonly behind: number;
  next(text: string, from: number): Candidate | null;
  /**
   * For matchers whose matches can be long (a JWT, a PEM block) but start with a short marker:
   * `lead` trailing characters may still begin a candidate not yet visible, and `decided` says when
   * a visible candidate can no longer change. Then a stream holds back only `lead` characters, or
   * a candidate in progress, instead of `reach`.
   */
  readonly lead?: number;
  decided?(text: string, c: Candidate): boolean;
}
