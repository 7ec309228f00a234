import type { CanonicalRequest } from '../providers/types.ts';
import type { RuntimeProject } from '../snapshot/runtime.ts';
import { redact } from './detect/index.ts';
import type { Direction } from './note.ts';
import { type ResolvedRules, rulesFor } from './resolve.ts';
import { editRequest } from './texts.ts';

/** A request with every finding of a rule that blocks or redacts masked (what a log may keep of it). */
export function maskRequest(rules: ResolvedRules, request: CanonicalRequest): CanonicalRequest {
  return editRequest(request, (t) => {
    if (t.length === 0) return t;
    const found = rules.compiled.scan(t, 'input').filter((f) => f.mode !== 'monitor');
    return found.length ? redact(t, found) : t;
  });
}

/**
 * What a surface keeps beside the pipeline in the client's own words (a stored response's input
 * items and instructions, a conversation's items, an async job's body) masked with the same rules
 * the pipeline applied: every string of the value, every finding of a rule that blocks or redacts.
 * By the time this runs the pipeline has let the request through (a block refused it before), so
 * masking is all that is left to do. Webhook rules only run in the pipeline.
 */
export function maskStored<T>(
  project: RuntimeProject,
  workflow: string | null,
  keyId: string | undefined,
  value: T,
  direction: Direction = 'input',
): T {
  const rules = rulesFor(project, workflow, keyId);
  if (!rules || !(direction === 'input' ? rules.input : rules.output)) return value;
  const visit = (v: unknown): unknown => {
    if (typeof v === 'string') {
      if (v.length === 0) return v;
      const found = rules.compiled.scan(v, direction).filter((f) => f.mode !== 'monitor');
      return found.length ? redact(v, found) : v;
    }
    if (Array.isArray(v)) {
      let changed = false;
      const out = v.map((x) => {
        const y = visit(x);
        if (y !== x) changed = true;
        return y;
      });
      return changed ? out : v;
    }
    if (v !== null && typeof v === 'object') {
      let changed = false;
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) {
        const y = visit(x);
        if (y !== x) changed = true;
        out[k] = y;
      }
      return changed ? out : v;
    }
    return v;
  };
  return visit(value) as T;
}
