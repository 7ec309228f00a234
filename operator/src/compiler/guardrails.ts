import {
  GUARDRAIL,
  type GuardrailDetector,
  type GuardrailRule,
  type Sealed,
  type SnapshotGuardrail,
  type SnapshotWorkflow,
  seal,
} from '#contract';
import { validatePattern } from '../../../gateway/src/guardrails/detect/index.ts';
import type { Guardrail, GuardrailRuleSpec } from '../resources/guardrail.ts';
import type { SecretIndex } from './secrets.ts';
import type { Reason } from './types.ts';
import type { Verdicts } from './verdicts.ts';
import { webhookSecretProblem } from './webhooks.ts';

type ProjectWorkflows = Map<string, Map<string, { compiled: SnapshotWorkflow; objectName: string }>>;

/** The sealing context of a webhook rule's secret; the gateway unseals with the same one. */
export const guardrailSecretContext = (projectId: string, guardrail: string, rule: string): string =>
  `guardrail:${projectId}:${guardrail}/${rule}`;

type Problem = { reason: Reason; message: string };

function detectorOf(
  r: GuardrailRuleSpec,
  seals: { secret(rule: string, ref: NonNullable<GuardrailRuleSpec['secretRef']>): Sealed | Problem },
): GuardrailDetector | Problem {
  switch (r.type) {
    case 'card':
    case 'iban':
    case 'email':
    case 'secret':
      return { type: r.type };
    case 'phone':
      return { type: 'phone', regions: r.regions ?? ['US'] };
    case 'nationalId':
      return { type: 'nationalId', kinds: r.kinds ?? [] };
    case 'pattern': {
      const pattern = r.pattern ?? '';
      const problem = patternProblem(pattern);
      if (problem) return { reason: 'InvalidPattern', message: `rule ${r.name}: ${problem}` };
      return {
        type: 'pattern',
        label: r.label ?? 'MATCH',
        pattern,
        caseInsensitive: r.caseInsensitive ?? false,
      };
    }
    case 'denyList':
      return { type: 'denyList', words: r.words ?? [], caseInsensitive: r.caseInsensitive ?? true };
    case 'promptInjection':
      return { type: 'promptInjection', threshold: r.threshold ?? 0.5 };
    case 'size':
      return {
        type: 'size',
        ...(r.maxInputChars ? { maxInputChars: r.maxInputChars } : {}),
        ...(r.maxOutputChars ? { maxOutputChars: r.maxOutputChars } : {}),
      };
    case 'webhook': {
      const secret = r.secretRef ? seals.secret(r.name, r.secretRef) : undefined;
      if (isProblem(secret)) return { ...secret, message: `rule ${r.name}: ${secret.message}` };
      return {
        type: 'webhook',
        url: r.url ?? '',
        timeoutMs: r.timeoutMs ?? GUARDRAIL.defaultWebhookTimeoutMs,
        ...(secret ? { secret } : {}),
      };
    }
  }
}

/** Why RE2 cannot run a pattern, or nothing: what CEL cannot check at admission, checked here. */
function patternProblem(pattern: string): string | undefined {
  const check = validatePattern(pattern);
  return check.ok ? undefined : check.reason;
}

const isProblem = (x: unknown): x is Problem => typeof x === 'object' && x !== null && 'reason' in x;

/**
 * Compiles Guardrails; returns `projectId → name → guardrail`. A Guardrail with a pattern RE2
 * cannot run, a missing workflow or key, or a missing webhook secret is left out whole, so a
 * project never runs half of a rule set someone meant as one.
 */
export function compileGuardrails(
  guardrails: readonly Guardrail[],
  projectIds: Map<string, string>,
  workflows: ProjectWorkflows,
  secrets: SecretIndex,
  sealKey: Buffer,
  verdicts: Verdicts,
): Map<string, Record<string, SnapshotGuardrail>> {
  const out = new Map<string, Record<string, SnapshotGuardrail>>();
  const placed: { g: Guardrail; projectId: string; compiled: SnapshotGuardrail }[] = [];
  for (const g of guardrails) {
    const ns = g.metadata.namespace;
    const name = g.metadata.name;
    const projectId = projectIds.get(`${ns}/${g.spec.projectRef.name}`);
    if (!projectId) {
      verdicts.fail(g, 'ProjectNotFound', `Project "${g.spec.projectRef.name}" not found in namespace ${ns}`);
      continue;
    }
    const attach = attachmentOf(g, projectId, workflows, verdicts);
    if (isProblem(attach)) {
      verdicts.fail(g, attach.reason, attach.message);
      continue;
    }
    const seals = {
      secret(rule: string, ref: { name: string; key: string }): Sealed | Problem {
        const found = secrets.lookup(ns, ref);
        if (!found.ok) return { reason: found.reason, message: found.message };
        const invalid = webhookSecretProblem(found.value);
        if (invalid) return { reason: 'SecretInvalid', message: `Secret "${ref.name}": ${invalid}` };
        return seal(sealKey, guardrailSecretContext(projectId, name, rule), found.value);
      },
    };
    const rules: GuardrailRule[] = [];
    let problem: Problem | undefined;
    for (const r of g.spec.rules) {
      const detector = detectorOf(r, seals);
      if (isProblem(detector)) {
        problem = detector;
        break;
      }
      rules.push({
        name: r.name,
        detector,
        mode: r.mode,
        direction: r.direction,
        enforced: r.enforced,
        ...(r.failMode ? { failMode: r.failMode } : {}),
      });
    }
    if (problem) {
      verdicts.fail(g, problem.reason, `${problem.message}; the Guardrail is left out`);
      continue;
    }
    const compiled: SnapshotGuardrail = {
      name,
      source: `${ns}/${name}`,
      attach,
      rules,
      allow: g.spec.allow ?? [],
      disable: g.spec.disable ?? [],
    };
    const forProject = out.get(projectId) ?? {};
    forProject[name] = compiled;
    out.set(projectId, forProject);
    placed.push({ g, projectId, compiled });
  }
  for (const { g, projectId, compiled } of placed) {
    const ignored = ignoredDisables(compiled, out.get(projectId) ?? {});
    const summary = `${compiled.rules.length} rule(s) on ${describeAttach(compiled)}`;
    verdicts.ok(g, ignored.length ? `${summary}; disable has no effect on ${ignored.join('; ')}` : summary, {
      rules: compiled.rules.length,
      ...(ignored.length ? { ignoredDisables: ignored.join('; ').slice(0, 4000) } : {}),
    });
  }
  return out;
}

function attachmentOf(
  g: Guardrail,
  projectId: string,
  workflows: ProjectWorkflows,
  verdicts: Verdicts,
): SnapshotGuardrail['attach'] | Problem {
  const ns = g.metadata.namespace;
  if (g.spec.scope === 'workflows') {
    const names: string[] = [];
    for (const ref of g.spec.workflowRefs ?? []) {
      const found = [...(workflows.get(projectId)?.values() ?? [])].find((w) => w.objectName === ref.name);
      if (!found) {
        const v = verdicts.get('Workflow', ns, ref.name);
        return v && !v.ok
          ? { reason: 'WorkflowNotReady', message: `Workflow "${ref.name}" is not ready (${v.reason})` }
          : {
              reason: 'WorkflowNotFound',
              message: `Workflow "${ref.name}" not found in project ${projectId}`,
            };
      }
      names.push(found.compiled.name);
    }
    return { scope: 'workflows', workflows: [...new Set(names)].sort() };
  }
  if (g.spec.scope === 'keys') {
    const keyIds: string[] = [];
    for (const ref of g.spec.apiKeyRefs ?? []) {
      // A key that is not Ready yet (pending, expired) still gets the Guardrail once it is.
      if (!verdicts.get('ApiKey', ns, ref.name))
        return { reason: 'ApiKeyNotFound', message: `ApiKey "${ref.name}" not found in namespace ${ns}` };
      keyIds.push(`${ns}/${ref.name}`);
    }
    return { scope: 'keys', keyIds: [...new Set(keyIds)].sort() };
  }
  return { scope: 'project' };
}

const describeAttach = (g: SnapshotGuardrail): string =>
  g.attach.scope === 'project'
    ? 'the whole project'
    : g.attach.scope === 'workflows'
      ? `workflow(s) ${g.attach.workflows.join(', ')}`
      : `key(s) ${g.attach.keyIds.join(', ')}`;

/** Entries of `disable` that switch nothing off, with why (enforced, unknown, or not wider). */
function ignoredDisables(g: SnapshotGuardrail, all: Record<string, SnapshotGuardrail>): string[] {
  const out: string[] = [];
  for (const entry of g.disable) {
    const [owner = '', rule = ''] = entry.split('/');
    const target = all[owner]?.rules.find((r) => r.name === rule);
    if (!target) out.push(`${entry} (no such rule in the project)`);
    else if (target.enforced) out.push(`${entry} (enforced at the project)`);
  }
  return out;
}
