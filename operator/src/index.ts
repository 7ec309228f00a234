/**
 * The operator's public surface for other packages (embedded mode, tools): compile CR objects into
 * a snapshot, load a folder of CR YAML, publish a snapshot to Redis. Everything else under
 * operator/src is internal to the operator.
 */
export { compileSnapshot, type Verdict } from './compiler/index.ts';
/**
 * The Workflow schema and the workflow pass of the compiler, for the gateway's console API: it
 * checks a workflow against the providers of its snapshot before writing it.
 */
export { Verdicts } from './compiler/verdicts.ts';
export { compileWorkflows } from './compiler/workflows.ts';
export { formatProblem, type LoadedConfig, loadConfigFolder } from './load/folder.ts';
export { SnapshotPublisher } from './publish/redis-publisher.ts';
export { type Workflow, workflow as workflowSchema } from './resources/workflow.ts';
