import type { WorkflowRecord } from './backend.ts';

/** Spec fields shown under their reference names; everything else keeps its CR name. */
const REFERENCE_NAMES: Record<string, string> = { requestType: 'request_type', eventName: 'event_name' };
const HIDDEN = new Set(['projectRef', 'name', 'backups']);

/**
 * A workflow as the console API answers it: the flat fields first (`name`, `provider`,
 * `model`, `request_type`, `backup_N_provider`/`backup_N_model`), then the spec's other fields, the
 * compiler's Ready verdict and where the object lives.
 */
export function workflowView(projectId: string, r: WorkflowRecord) {
  const s = r.spec;
  const out: Record<string, unknown> = {
    object: 'workflow',
    project_id: projectId,
    name: r.name,
    provider: s.provider,
    model: s.model,
    request_type: s.requestType ?? 'chat',
  };
  const backups = Array.isArray(s.backups) ? (s.backups as { provider?: unknown; model?: unknown }[]) : [];
  backups.forEach((b, i) => {
    out[`backup_${i + 1}_provider`] = b.provider;
    out[`backup_${i + 1}_model`] = b.model;
  });
  for (const [k, v] of Object.entries(s)) {
    const key = REFERENCE_NAMES[k] ?? k;
    if (!HIDDEN.has(k) && !(key in out) && v !== undefined) out[key] = v;
  }
  out.ready = {
    status: r.ready.status,
    reason: r.ready.reason,
    message: r.ready.message,
    ...(r.ready.observedGeneration !== undefined ? { observed_generation: r.ready.observedGeneration } : {}),
  };
  out.managed_by_console = r.managed;
  out.resource = {
    namespace: r.namespace,
    name: r.objectName,
    ...(r.generation !== undefined ? { generation: r.generation } : {}),
    ...(r.resourceVersion !== undefined ? { resource_version: r.resourceVersion } : {}),
  };
  return out;
}
