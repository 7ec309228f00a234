import type { SnapshotWorkflow, SpendCapConfig } from '#contract';
import type { SpendCap } from '../resources/spendcap.ts';
import type { Verdicts } from './verdicts.ts';

type ProjectWorkflows = Map<string, Map<string, { compiled: SnapshotWorkflow; objectName: string }>>;

/** Compiles spend caps; returns `projectId → caps`. A cap on a slot that does not exist is refused. */
export function compileSpendCaps(
  caps: readonly SpendCap[],
  projectIds: Map<string, string>,
  workflows: ProjectWorkflows,
  verdicts: Verdicts,
): Map<string, SpendCapConfig[]> {
  const out = new Map<string, SpendCapConfig[]>();
  for (const c of caps) {
    const ns = c.metadata.namespace;
    const projectId = projectIds.get(`${ns}/${c.spec.projectRef.name}`);
    if (!projectId) {
      verdicts.fail(c, 'ProjectNotFound', `Project "${c.spec.projectRef.name}" not found in namespace ${ns}`);
      continue;
    }
    const id = `${ns}/${c.metadata.name}`;
    let config: SpendCapConfig;
    if (c.spec.scope === 'workflow') {
      const wfName = c.spec.workflowRef?.name ?? '';
      const slot = c.spec.slot ?? '';
      const found = [...(workflows.get(projectId)?.values() ?? [])].find((w) => w.objectName === wfName);
      if (!found) {
        const v = verdicts.get('Workflow', ns, wfName);
        // A Valid verdict means the workflow exists but belongs to another project: not found in this one.
        if (v && !v.ok)
          verdicts.fail(c, 'WorkflowNotReady', `Workflow "${wfName}" is not ready (${v.reason})`);
        else verdicts.fail(c, 'WorkflowNotFound', `Workflow "${wfName}" not found in project ${projectId}`);
        continue;
      }
      const position = slot === 'primary' ? 0 : Number(slot.slice('backup-'.length));
      if (position > found.compiled.backups.length) {
        verdicts.fail(
          c,
          'SlotNotFound',
          `Workflow "${wfName}" has no slot ${slot} (it has primary${found.compiled.backups.map((_, i) => `, backup-${i + 1}`).join('')})`,
        );
        continue;
      }
      config = {
        id,
        scope: 'workflow',
        workflow: found.compiled.name,
        slot,
        period: c.spec.period,
        limitUsd: c.spec.limitUsd,
      };
    } else {
      config = { id, scope: 'project', period: c.spec.period, limitUsd: c.spec.limitUsd };
    }
    const list = out.get(projectId) ?? [];
    list.push(config);
    out.set(projectId, list);
    verdicts.ok(
      c,
      `caps ${config.scope === 'workflow' ? `${config.workflow} ${config.slot}` : 'the project'} at $${c.spec.limitUsd} ${c.spec.period}`,
    );
  }
  for (const list of out.values()) list.sort((a, b) => a.id.localeCompare(b.id));
  return out;
}
