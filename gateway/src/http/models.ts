import type { RuntimeProject, RuntimeWorkflow } from '../snapshot/runtime.ts';

export const OWNED_BY = 'switchyard';

/** The compatible model object: one per workflow, `id` being the workflow name. */
export function modelObject(wf: RuntimeWorkflow) {
  const c = wf.config;
  return {
    id: c.name,
    object: 'model' as const,
    created: c.createdAt,
    owned_by: OWNED_BY,
    permission: [] as never[],
    root: `${c.primary.provider}/${c.primary.model}`,
    service_metadata: {
      provider: c.primary.provider,
      provider_model: c.primary.model,
      test_mode: c.testMode,
      request_type: c.requestType,
    },
  };
}

/** Legacy list: the providers' own models, grouped by provider (shape documented in docs/api.md). */
export function providerModels(project: RuntimeProject) {
  return {
    object: 'list' as const,
    data: [...project.providers.values()].map((p) => ({
      provider: p.config.name,
      type: p.config.type,
      models: Object.entries(p.config.models).map(([id, m]) => ({
        id,
        object: 'model' as const,
        request_types: m.requestTypes,
      })),
    })),
  };
}
