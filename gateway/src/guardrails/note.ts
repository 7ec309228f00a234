import type { GuardrailMode } from '#contract';

export type Direction = 'input' | 'output';

/** A finding as it is recorded (request logs, the header, metrics): never the value, only its hash. */
export interface RecordedFinding {
  rule: string;
  label: string;
  mode: GuardrailMode;
  direction: Direction;
  hash: string;
}

/** A webhook check that failed, and which way its rule failed. */
export interface CheckFailure {
  rule: string;
  direction: Direction;
  outcome: 'failed-open' | 'failed-closed';
  why: string;
}

/** What guardrails did to one exchange: the one owner of `notes.guardrails`. */
export interface GuardrailNote {
  findings: RecordedFinding[];
  failures: CheckFailure[];
  /** A refused request as its request-log body may show it: every finding masked, blocks included. */
  refusedRequest?: unknown;
}

export const newNote = (): GuardrailNote => ({ findings: [], failures: [] });

/** `<rule>=<mode>` for each rule that fired (a failed check as `failed-open` / `failed-closed`). */
export function firedList(note: GuardrailNote): string {
  const fired = new Map<string, string>();
  for (const f of note.findings) fired.set(f.rule, f.mode);
  for (const f of note.failures) fired.set(f.rule, f.outcome);
  return [...fired].map(([rule, mode]) => `${rule}=${mode}`).join(',');
}
