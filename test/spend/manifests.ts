import { NS, PROJECT, provider } from '../harness/manifests.ts';

const v1 = 'switchyard.dev/v1alpha1';

/** A SpendCap manifest: project scope, or workflow scope when `workflow` and `slot` are given. */
export function spendCap(
  name: string,
  spec: { project?: string; period: string; limitUsd: string; workflow?: string; slot?: string },
) {
  return {
    apiVersion: v1,
    kind: 'SpendCap',
    metadata: { name, namespace: NS },
    spec: {
      projectRef: { name: spec.project ?? PROJECT },
      scope: spec.workflow ? 'workflow' : 'project',
      ...(spec.workflow ? { workflowRef: { name: spec.workflow }, slot: spec.slot ?? 'primary' } : {}),
      period: spec.period,
      limitUsd: spec.limitUsd,
    },
  };
}

/** A workflow of any project (the harness's `workflow` always uses the main project). */
export function workflowOf(project: string, name: string, spec: Record<string, unknown>) {
  return {
    apiVersion: v1,
    kind: 'Workflow',
    metadata: { name, namespace: NS },
    spec: { projectRef: { name: project }, ...spec },
  };
}

/** The simulator's list price in µUSD at the harness pricing (1 $/MTok in, 2 $/MTok out), rounded up. */
export const simCostMicros = (u: { prompt_tokens: number; completion_tokens: number }): number =>
  Math.ceil(u.prompt_tokens * 1 + u.completion_tokens * 2);

/**
 * An openai-type provider on the simulator serving one chat model at the given list prices
 * ($ per million tokens), optionally with a declared maxOutputTokens.
 */
export function pricedProvider(
  name: string,
  simUrl: string,
  model: string,
  price: { in: number; out: number; maxOutputTokens?: number },
) {
  return provider(name, 'openai', simUrl, [model]).map((o) =>
    'spec' in o
      ? {
          ...o,
          spec: {
            ...o.spec,
            models: [
              {
                name: model,
                requestTypes: ['chat'],
                ...(price.maxOutputTokens !== undefined ? { maxOutputTokens: price.maxOutputTokens } : {}),
                pricing: { inputUsdPerMTok: String(price.in), outputUsdPerMTok: String(price.out) },
              },
            ],
          },
        }
      : o,
  );
}
