import { createHash } from 'node:crypto';
import type { Prepared } from '../pipeline/prepare.ts';
import { unmarked } from '../providers/common.ts';
import type { CanonicalRequest } from '../providers/types.ts';
import type { RuntimeWorkflow } from '../snapshot/runtime.ts';

const versions = new WeakMap<RuntimeWorkflow, string>();

/**
 * A workflow's config version: a hash of its compiled config and the slots it routes to (provider
 * type, base URL, model). Computed once per snapshot (a new snapshot builds new RuntimeWorkflows),
 * so any change to the workflow or its providers' routing makes its old entries unreachable.
 */
export function workflowVersion(wf: RuntimeWorkflow): string {
  let v = versions.get(wf);
  if (!v) {
    const slots = wf.slots.map((s) => [s.provider, s.target.type, s.target.baseURL, s.model]);
    v = createHash('sha256')
      .update(JSON.stringify([wf.config, slots]))
      .digest('hex')
      .slice(0, 32);
    versions.set(wf, v);
  }
  return v;
}

/** A request as its answer depends on it: cache breakpoints change what it costs, not the answer. */
function answered(req: CanonicalRequest): CanonicalRequest {
  if (req.kind !== 'chat') return req;
  const messages = unmarked(req.messages);
  const tools = req.tools && unmarked(req.tools);
  return messages === req.messages && tools === req.tools ? req : { ...req, messages, tools };
}

/**
 * The exact-match key: SHA-256 over project, workflow name and config version, and the canonical
 * request (messages with the system instructions in them, parameters, tools, structured-output
 * schema). The project is also the Redis hash tag, so entries are never shared between projects.
 */
export function cacheKey(projectId: string, wf: RuntimeWorkflow, p: Prepared): string {
  return createHash('sha256')
    .update(
      JSON.stringify([
        projectId,
        wf.config.name,
        workflowVersion(wf),
        answered(p.request),
        p.plan.structured ?? null,
        p.plan.json,
      ]),
    )
    .digest('hex');
}
