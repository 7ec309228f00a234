/**
 * The guardrail detection engine: pure functions over text, no network, no I/O. Rules compile once
 * per snapshot; `scan` finds, `redact` masks, `StreamScanner` does both on a stream with a hold-back
 * window so no match slips out split across chunks. Detectors are documented in docs/guardrails.md.
 */
export { type CompiledRules, compileRules, InvalidRuleError } from './compile.ts';
export { type PatternCheck, validatePattern } from './re2.ts';
export { isMaskable, redact } from './redact.ts';
export { type StreamOptions, StreamScanner, type StreamStep } from './stream.ts';
export type { Direction, Finding } from './types.ts';
