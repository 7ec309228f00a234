/**
 * The operator's public surface for other packages (embedded mode, tools): compile CR objects into
 * a snapshot, load a folder of CR YAML, publish a snapshot to Redis. Everything else under
 * operator/src is internal to the operator.
 */
export { compileSnapshot, type Verdict } from './compiler/index.ts';
export { formatProblem, type LoadedConfig, loadConfigFolder } from './load/folder.ts';
export { SnapshotPublisher } from './publish/redis-publisher.ts';
/** The Workflow schema, for the gateway's console API in embedded mode (checks what it writes). */
export { type Workflow, workflow as workflowSchema } from './resources/workflow.ts';
