import { Counter, type Registry } from 'prom-client';

export interface GuardrailMetrics {
  findings: Counter<'rule' | 'mode' | 'direction'>;
  checkFailures: Counter<'rule' | 'outcome'>;
}

const built = new WeakMap<Registry, GuardrailMetrics>();

/** Guardrail metrics, registered once per registry. Labels name rules, never what they found. */
export function guardrailMetrics(registry: Registry): GuardrailMetrics {
  const have = built.get(registry);
  if (have) return have;
  const m: GuardrailMetrics = {
    findings: new Counter({
      name: 'switchyard_guardrail_findings_total',
      help: 'Guardrail findings by rule (<guardrail>/<rule>), mode (block, redact, monitor) and direction (input, output).',
      labelNames: ['rule', 'mode', 'direction'] as const,
      registers: [registry],
    }),
    checkFailures: new Counter({
      name: 'switchyard_guardrail_check_failures_total',
      help: 'Webhook guardrail checks that failed (down, slow, garbled), by rule and outcome (failed-open, failed-closed).',
      labelNames: ['rule', 'outcome'] as const,
      registers: [registry],
    }),
  };
  built.set(registry, m);
  return m;
}
