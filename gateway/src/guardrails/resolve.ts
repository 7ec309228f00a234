import type { GuardrailMode, GuardrailRule, SnapshotGuardrail } from '#contract';
import type { RuntimeProject } from '../snapshot/runtime.ts';
import { type CompiledRules, compileRules } from './detect/index.ts';

import type { Direction } from './note.ts';

export type { Direction };

/** A webhook rule as the pipeline calls it: its qualified name, what it does and how it fails. */
export interface WebhookRule {
  rule: string;
  mode: GuardrailMode;
  direction: GuardrailRule['direction'];
  url: string;
  timeoutMs: number;
  failClosed: boolean;
  /** The guardrail's whole allow list (a redaction over an allowed value is dropped). */
  allow: readonly string[];
}

/**
 * The rules one request runs, compiled: built once per project, workflow and key of a snapshot
 * (never per request). Rule names are qualified `<guardrail>/<rule>` everywhere past this point.
 */
export interface ResolvedRules {
  compiled: CompiledRules;
  modes: ReadonlyMap<string, GuardrailMode>;
  /** Whether any rule watches prompts / answers (a request with neither skips the feature). */
  input: boolean;
  output: boolean;
  webhooks: readonly WebhookRule[];
}

const LEVEL: Record<SnapshotGuardrail['attach']['scope'], number> = { project: 0, workflows: 1, keys: 2 };

const applies = (g: SnapshotGuardrail, workflow: string | null, keyId: string | undefined): boolean =>
  g.attach.scope === 'project' ||
  (g.attach.scope === 'workflows' && workflow !== null && g.attach.workflows.includes(workflow)) ||
  (g.attach.scope === 'keys' && keyId !== undefined && g.attach.keyIds.includes(keyId));

const watches = (r: GuardrailRule, d: Direction): boolean => r.direction === 'both' || r.direction === d;

/**
 * Project → workflow → key: every attached rule runs, except a wider one a narrower Guardrail
 * switched off by name, and never an enforced one. Pure, for tests and the dry-run endpoint.
 */
export function resolveRules(
  guardrails: Readonly<Record<string, SnapshotGuardrail>>,
  workflow: string | null,
  keyId: string | undefined,
): { rules: { guardrail: SnapshotGuardrail; rule: GuardrailRule }[]; allow: string[] } {
  const attached = Object.values(guardrails)
    .filter((g) => applies(g, workflow, keyId))
    .sort((a, b) => LEVEL[a.attach.scope] - LEVEL[b.attach.scope] || a.name.localeCompare(b.name));
  const rules: { guardrail: SnapshotGuardrail; rule: GuardrailRule }[] = [];
  for (const g of attached) {
    const level = LEVEL[g.attach.scope];
    const switchedOff = (name: string) =>
      attached.some((n) => LEVEL[n.attach.scope] > level && n.disable.includes(`${g.name}/${name}`));
    for (const r of g.rules) if (r.enforced || !switchedOff(r.name)) rules.push({ guardrail: g, rule: r });
  }
  return { rules, allow: [...new Set(attached.flatMap((g) => g.allow))] };
}

function build(
  guardrails: Readonly<Record<string, SnapshotGuardrail>>,
  workflow: string | null,
  keyId: string | undefined,
): ResolvedRules | undefined {
  const { rules, allow } = resolveRules(guardrails, workflow, keyId);
  if (rules.length === 0) return undefined;
  const modes = new Map<string, GuardrailMode>();
  const local: GuardrailRule[] = [];
  const webhooks: WebhookRule[] = [];
  for (const { guardrail, rule } of rules) {
    const name = `${guardrail.name}/${rule.name}`;
    modes.set(name, rule.mode);
    if (rule.detector.type === 'webhook')
      webhooks.push({
        rule: name,
        mode: rule.mode,
        direction: rule.direction,
        url: rule.detector.url,
        timeoutMs: rule.detector.timeoutMs,
        failClosed: (rule.failMode ?? (rule.mode === 'block' ? 'closed' : 'open')) === 'closed',
        allow: guardrail.allow,
      });
    else local.push({ ...rule, name });
  }
  return {
    compiled: compileRules(local, allow),
    modes,
    input: rules.some(({ rule }) => watches(rule, 'input')),
    output: rules.some(({ rule }) => watches(rule, 'output')),
    webhooks,
  };
}

/** Per snapshot: a RuntimeProject object lives exactly as long as the snapshot that built it. */
const bySnapshot = new WeakMap<RuntimeProject, Map<string, ResolvedRules | undefined>>();
/** The entry of a project without Guardrails: every request of it answers from here. */
const NONE = new Map<string, ResolvedRules | undefined>();

/** The compiled rules for a request, or undefined when none apply. */
export function rulesFor(
  project: RuntimeProject,
  workflow: string | null,
  keyId: string | undefined,
): ResolvedRules | undefined {
  let cache = bySnapshot.get(project);
  if (!cache) {
    cache = Object.keys(project.config.guardrails).length === 0 ? NONE : new Map();
    bySnapshot.set(project, cache);
  }
  if (cache === NONE) return undefined;
  const key = `${workflow ?? ''}\n${keyId ?? ''}`;
  if (cache.has(key)) return cache.get(key);
  const built = build(project.config.guardrails, workflow, keyId);
  cache.set(key, built);
  return built;
}
