import type { RequestType } from '#contract';
import { GatewayError } from '../errors/index.ts';
import type { RuntimeProject, RuntimeSlot, RuntimeWorkflow } from '../snapshot/runtime.ts';

export interface Selection {
  workflow?: string | undefined;
  model?: string | undefined;
  provider?: string | undefined;
}

export type Route =
  | { kind: 'workflow'; workflow: RuntimeWorkflow }
  | { kind: 'direct'; slot: RuntimeSlot; supported: readonly RequestType[] };

const notFound = (name: string): GatewayError =>
  new GatewayError('workflow_not_found', `Workflow "${name}" does not exist in this project.`, {
    hint: "Workflow names are case-sensitive; GET /v1/models lists the workflows of this key's project.",
  });

/**
 * The selection rules (docs/api.md, "Workflow selection"): `workflow` wins over `model`;
 * otherwise `model` names a workflow; without a workflow, `provider` and `model` name the upstream
 * directly. Lookups stay inside the key's project.
 */
export function resolveRoute(project: RuntimeProject, sel: Selection): Route {
  if (sel.workflow !== undefined) {
    const wf = project.workflows.get(sel.workflow);
    if (!wf) throw notFound(sel.workflow);
    return { kind: 'workflow', workflow: wf };
  }
  if (sel.model !== undefined) {
    const wf = project.workflows.get(sel.model);
    if (wf) return { kind: 'workflow', workflow: wf };
    if (sel.provider === undefined) throw notFound(sel.model);
    return direct(project, sel.provider, sel.model);
  }
  if (sel.provider !== undefined)
    throw new GatewayError('invalid_request', 'model is required when provider is sent without a workflow.', {
      param: 'model',
    });
  throw new GatewayError(
    'invalid_request',
    'Name a workflow: send "workflow" (or "model" with a workflow name).',
    {
      param: 'workflow',
      hint: 'Without a workflow, send both "provider" and "model".',
    },
  );
}

function direct(project: RuntimeProject, providerName: string, model: string): Route {
  const provider = project.providers.get(providerName);
  if (!provider)
    throw new GatewayError(
      'invalid_request',
      `Provider "${providerName}" is not configured for this project.`,
      { param: 'provider' },
    );
  // Own keys only: a model named `__proto__` or `constructor` must not find Object.prototype's members.
  const entry = Object.hasOwn(provider.config.models, model) ? provider.config.models[model] : undefined;
  if (!entry)
    throw new GatewayError(
      'invalid_request',
      `Model "${model}" is not offered by provider "${providerName}".`,
      {
        param: 'model',
        hint: `Offered: ${Object.keys(provider.config.models).join(', ')}.`,
      },
    );
  return {
    kind: 'direct',
    supported: entry.requestTypes,
    slot: {
      slot: 'primary',
      position: 0,
      provider: providerName,
      model,
      target: provider.targetFor(model),
      pricing: entry.pricing,
    },
  };
}
