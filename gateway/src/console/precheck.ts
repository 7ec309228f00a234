import type { SnapshotProject } from '#contract';
import { compileWorkflows, Verdicts, workflowSchema } from '#operator';
import { type ConsoleProject, WorkflowRefusedError, type WorkflowSpec } from './backend.ts';
import { specPathOfVerdict } from './fields.ts';

/**
 * Runs the compiler's workflow pass over the candidate and the providers of the project's current
 * snapshot, before anything is written: on a cluster a refused spec that had been written would
 * replace a serving workflow until it is put back. A spec the schema refuses is left to the API
 * server, whose words are the answer. The operator's verdict after the write stays the authority
 * (a snapshot can be a moment behind the cluster).
 */
export function precheck(
  project: ConsoleProject,
  snapshot: SnapshotProject,
  objectName: string,
  spec: WorkflowSpec,
): void {
  const parsed = workflowSchema.safeParse({
    apiVersion: 'switchyard.dev/v1alpha1',
    kind: 'Workflow',
    metadata: { name: objectName, namespace: project.namespace },
    spec,
  });
  if (!parsed.success) return;
  const providers = new Map(
    Object.values(snapshot.providers).map((p) => [`${project.namespace}/${p.name}`, p]),
  );
  const verdicts = new Verdicts();
  compileWorkflows(
    [parsed.data],
    new Map([[`${project.namespace}/${project.name}`, project.id]]),
    providers,
    verdicts,
  );
  const v = verdicts.get('Workflow', project.namespace, objectName);
  if (v && !v.ok) throw new WorkflowRefusedError(v.reason, v.message, specPathOfVerdict(v.reason, v.message));
}
