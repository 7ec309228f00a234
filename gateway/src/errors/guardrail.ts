import { GatewayError } from './gateway-error.ts';

/** The stable header listing the guardrail rules that fired: `<guardrail>/<rule>=<mode>,...`. */
export const GUARDRAILS_HEADER = 'x-service-guardrails';

/**
 * A `block` rule found something in the prompt or the answer. The message names the rule and the
 * kind of value, never the value; `details` carry the same on every surface's error body.
 */
export class GuardrailBlocked extends GatewayError {
  readonly rule: string;
  readonly direction: 'input' | 'output';

  constructor(
    rule: string,
    label: string,
    direction: 'input' | 'output',
    opts: { checkFailed?: boolean; headers?: Record<string, string> } = {},
  ) {
    const where = direction === 'input' ? 'the request' : 'the answer';
    super(
      'guardrail_blocked',
      opts.checkFailed
        ? `Guardrail rule "${rule}" could not check ${where} and is set to fail closed, so it was blocked.`
        : `Guardrail rule "${rule}" blocked ${where}: it contains ${label}.`,
      {
        hint: 'Remove the flagged content, or ask the project owner about the rule.',
        details: { rule, direction, ...(opts.checkFailed ? { check_failed: true } : {}) },
        headers: opts.headers,
      },
    );
    this.rule = rule;
    this.direction = direction;
  }
}
