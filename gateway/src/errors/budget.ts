import { microsToUsd, type SpendPeriod } from '#contract';
import { GatewayError } from './gateway-error.ts';

/** A skipped attempt as the workflow budget bodies list it. */
export interface SkippedAttempt {
  provider: string;
  model: string;
  status: 'skipped';
  reason: { message: string };
}

/**
 * The budget bodies (docs/api.md, "Spend caps and rate limits"): the fields ride in `details`, so
 * errors/bodies.ts puts the same `error` object fields on both surfaces.
 */
export function projectBudgetExceeded(p: {
  capId: string;
  period: SpendPeriod;
  limitMicros: number;
  spentMicros: number;
  resetAt: Date;
}): GatewayError {
  const cap = microsToUsd(p.limitMicros);
  return new GatewayError(
    'project_budget_exceeded',
    `The project's ${p.period} spend cap of $${cap} is reached (spent $${microsToUsd(p.spentMicros)}); it resets at ${p.resetAt.toISOString()}.`,
    {
      details: {
        scope: 'project',
        cap_usd: cap,
        spent_usd: microsToUsd(p.spentMicros),
        period: p.period,
        reset_at: p.resetAt.toISOString(),
      },
    },
  );
}

export function projectBudgetConfigError(provider: string, model: string): GatewayError {
  return new GatewayError(
    'project_budget_config_error',
    `The project spend cap cannot be enforced: model "${model}" of provider "${provider}" has no USD pricing for this request.`,
    {
      hint: 'Set the model pricing on the Provider, or remove the project SpendCap.',
      details: { scope: 'project' },
    },
  );
}

export function workflowBudgetExceeded(workflow: string, attempts: readonly SkippedAttempt[]): GatewayError {
  return new GatewayError(
    'workflow_budget_exceeded',
    `Every model of workflow "${workflow}" is over its spend cap; no provider was called.`,
    { details: { scope: 'workflow', workflow, attempts } },
  );
}

export function workflowBudgetConfigError(
  workflow: string,
  attempts: readonly SkippedAttempt[],
): GatewayError {
  return new GatewayError(
    'workflow_budget_config_error',
    `A capped model of workflow "${workflow}" cannot be evaluated: its pricing does not cover this request.`,
    {
      hint: 'Set the model pricing on the Provider, or remove the workflow SpendCap.',
      details: { scope: 'workflow', workflow, attempts },
    },
  );
}

export function rateLimited(
  scope: 'project' | 'key',
  kind: 'requests' | 'tokens',
  perMinute: number,
  retryMs: number,
  headers: Record<string, string>,
): GatewayError {
  const seconds = Math.max(1, Math.ceil(retryMs / 1000));
  const whose = scope === 'project' ? 'the project' : 'this API key';
  return new GatewayError(
    'rate_limit_exceeded',
    `Rate limit of ${perMinute} ${kind} per minute for ${whose} reached. Please try again in ${(Math.max(1, retryMs) / 1000).toFixed(3)}s.`,
    { retryAfterSeconds: seconds, headers },
  );
}
