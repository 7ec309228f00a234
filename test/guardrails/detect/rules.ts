import { type GuardrailRule, guardrailRule } from '#contract';

/** A rule as the snapshot would carry it (defaults applied by the contract's schema). */
export const rule = (name: string, detector: unknown, mode = 'redact', direction = 'both'): GuardrailRule =>
  guardrailRule.parse({ name, detector, mode, direction });
