import { SESSION_MEMORY, type SnapshotProvider, type SnapshotWorkflow } from '#contract';
import type { Workflow } from '../resources/workflow.ts';
import { olderFirst, type Reason } from './types.ts';
import type { Verdicts } from './verdicts.ts';

type SlotProblem = { reason: Reason; message: string };

function checkSlot(
  wf: Workflow,
  slot: string,
  target: { provider: string; model: string },
  providers: Map<string, SnapshotProvider>,
  verdicts: Verdicts,
): SlotProblem | undefined {
  const ns = wf.metadata.namespace;
  const provider = providers.get(`${ns}/${target.provider}`);
  if (!provider) {
    const v = verdicts.get('Provider', ns, target.provider);
    return v
      ? {
          reason: 'ProviderNotReady',
          message: `${slot}: Provider "${target.provider}" is not ready (${v.reason}: ${v.message})`,
        }
      : {
          reason: 'ProviderNotFound',
          message: `${slot}: Provider "${target.provider}" not found in namespace ${ns}`,
        };
  }
  const model = provider.models[target.model];
  if (!model)
    return {
      reason: 'ModelNotFound',
      message: `${slot}: model "${target.model}" is not offered by Provider "${target.provider}" (offers: ${Object.keys(provider.models).join(', ')})`,
    };
  if (!model.requestTypes.includes(wf.spec.requestType))
    return {
      reason: 'ModelDoesNotSupportRequestType',
      message: `${slot}: model "${target.model}" of Provider "${target.provider}" does not support request type "${wf.spec.requestType}" (supports: ${model.requestTypes.join(', ')})`,
    };
  return undefined;
}

const createdSeconds = (wf: Workflow): number => {
  const t = wf.metadata.creationTimestamp ? Date.parse(wf.metadata.creationTimestamp) : Number.NaN;
  return Number.isFinite(t) ? Math.floor(t / 1000) : 0;
};

/** Older objects keep their name on a clash, so applying a duplicate never breaks a live workflow. */
const byAge = (a: Workflow, b: Workflow): number =>
  olderFirst(a, b, a.metadata.name.localeCompare(b.metadata.name));

/** Compiles workflows of Ready projects; returns `projectId → apiName → workflow` plus the name of the source object. */
export function compileWorkflows(
  workflows: readonly Workflow[],
  projectIds: Map<string, string>,
  providers: Map<string, SnapshotProvider>,
  verdicts: Verdicts,
): Map<string, Map<string, { compiled: SnapshotWorkflow; objectName: string }>> {
  const out = new Map<string, Map<string, { compiled: SnapshotWorkflow; objectName: string }>>();
  for (const wf of [...workflows].sort(byAge)) {
    const ns = wf.metadata.namespace;
    const projectId = projectIds.get(`${ns}/${wf.spec.projectRef.name}`);
    if (!projectId) {
      verdicts.fail(
        wf,
        'ProjectNotFound',
        `Project "${wf.spec.projectRef.name}" not found in namespace ${ns}`,
      );
      continue;
    }
    const slots = [
      ['primary', { provider: wf.spec.provider, model: wf.spec.model }] as const,
      ...(wf.spec.backups ?? []).map((b, i) => [`backup-${i + 1}`, b] as const),
    ];
    const problem = slots
      .map(([slot, t]) => checkSlot(wf, slot, t, providers, verdicts))
      .find((p) => p !== undefined);
    if (problem) {
      verdicts.fail(wf, problem.reason, problem.message);
      continue;
    }
    const apiName = wf.spec.name ?? wf.metadata.name;
    const inProject =
      out.get(projectId) ?? new Map<string, { compiled: SnapshotWorkflow; objectName: string }>();
    out.set(projectId, inProject);
    const holder = inProject.get(apiName);
    if (holder) {
      verdicts.fail(
        wf,
        'DuplicateWorkflowName',
        `workflow name "${apiName}" is already used in project ${projectId} by Workflow "${holder.objectName}"`,
      );
      continue;
    }
    const s = wf.spec;
    inProject.set(apiName, {
      objectName: wf.metadata.name,
      compiled: {
        name: apiName,
        source: `${ns}/${wf.metadata.name}`,
        ...(s.description ? { description: s.description } : {}),
        requestType: s.requestType,
        primary: { provider: s.provider, model: s.model },
        backups: (s.backups ?? []).map((b) => ({ provider: b.provider, model: b.model })),
        ...(s.systemInstructions ? { systemInstructions: s.systemInstructions } : {}),
        ...(s.structuredOutput ? { structuredOutputSchema: s.structuredOutput.schema } : {}),
        cacheFields: s.cacheFields ?? [],
        sessionMemory: {
          enabled: s.sessionMemory?.enabled ?? false,
          summarizeAtTokens: s.sessionMemory?.summarizeAtTokens ?? SESSION_MEMORY.defaultSummarizeAtTokens,
          ttlSeconds: s.sessionMemory?.ttlSeconds ?? SESSION_MEMORY.defaultTtlSeconds,
        },
        ...(s.eventName ? { eventName: s.eventName } : {}),
        ...(s.responseCache ? { responseCacheTtlSeconds: s.responseCache.ttlSeconds } : {}),
        ...(s.hostedTools
          ? {
              hostedTools: {
                default: s.hostedTools.default,
                ...(s.hostedTools.tools ? { tools: s.hostedTools.tools } : {}),
              },
            }
          : {}),
        testMode: s.testMode,
        createdAt: createdSeconds(wf),
      },
    });
    verdicts.ok(wf, `serving as "${apiName}" in project ${projectId}`, {
      apiName,
      route: `${s.provider}/${s.model}`,
      backups: s.backups?.length ?? 0,
    });
  }
  return out;
}
