import type { McpProbe } from '../mcp/prober.ts';
import type { Condition } from '../resources/common.ts';
import type { KindStatus, StatusFields } from './desired.ts';

export type ConditionInput = Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>;

/** RFC 3339 to the second, like every other time the operator writes into status. */
const seconds = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/**
 * What the last probe says about an MCPServer: its status fields and the `Reachable` condition.
 * Fields describe the last probe only, so a failed probe clears what an earlier one found.
 */
export function mcpProbeStatus(
  probe: McpProbe | undefined,
  served: boolean,
  current?: { status: KindStatus<'MCPServer'> | undefined; generation: number | undefined },
): { fields: Partial<StatusFields<'MCPServer'>>; reachable: ConditionInput } {
  if (!served)
    return {
      fields: {},
      reachable: {
        type: 'Reachable',
        status: 'Unknown',
        reason: 'NotServed',
        message: 'Not probed: the server is not part of the published snapshot (see Ready).',
      },
    };
  // A new leader has probed nothing yet: what the last one found for this spec stands until it has.
  const before = current?.status?.conditions?.find((c) => c.type === 'Reachable');
  if (!probe && before && before.status !== 'Unknown' && before.observedGeneration === current?.generation) {
    const s = current?.status;
    return {
      fields: {
        lastProbeTime: s?.lastProbeTime,
        protocolVersion: s?.protocolVersion,
        serverName: s?.serverName,
        toolCount: s?.toolCount,
        offeredToolCount: s?.offeredToolCount,
        catalogueHash: s?.catalogueHash,
      },
      reachable: { type: 'Reachable', status: before.status, reason: before.reason, message: before.message },
    };
  }
  if (!probe)
    return {
      fields: {},
      reachable: {
        type: 'Reachable',
        status: 'Unknown',
        reason: 'Probing',
        message: 'Waiting for the first probe.',
      },
    };
  const found = fromProbe(probe);
  // Found what the status already says (a probe of a new leader, say): the time stays, no write.
  const s = current?.status;
  const was = s?.conditions?.find((c) => c.type === 'Reachable');
  const same =
    s?.lastProbeTime !== undefined &&
    was?.status === found.reachable.status &&
    was.reason === found.reachable.reason &&
    was.message === found.reachable.message &&
    PROBE_FIELDS.every((k) => s[k] === found.fields[k]);
  return same ? { ...found, fields: { ...found.fields, lastProbeTime: s.lastProbeTime } } : found;
}

const PROBE_FIELDS = [
  'protocolVersion',
  'serverName',
  'toolCount',
  'offeredToolCount',
  'catalogueHash',
] as const;

function fromProbe(probe: McpProbe): {
  fields: Partial<StatusFields<'MCPServer'>>;
  reachable: ConditionInput;
} {
  const lastProbeTime = seconds(probe.at);
  const r = probe.result;
  if (!r.ok)
    return {
      fields: { lastProbeTime },
      reachable: { type: 'Reachable', status: 'False', reason: r.reason, message: r.message },
    };
  const offered = probe.offered ?? r.toolNames.length;
  return {
    fields: {
      lastProbeTime,
      protocolVersion: r.protocolVersion,
      serverName: r.serverName,
      toolCount: r.toolNames.length,
      offeredToolCount: offered,
      catalogueHash: r.catalogueHash,
    },
    reachable: {
      type: 'Reachable',
      status: 'True',
      reason: 'ToolsListed',
      message: `Listed ${r.toolNames.length} tool(s), ${offered} offered after allowTools/denyTools, over MCP ${r.protocolVersion}.`,
    },
  };
}
