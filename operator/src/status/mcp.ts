import type { McpProbe } from '../mcp/prober.ts';
import type { Condition } from '../resources/common.ts';
import type { StatusFields } from './desired.ts';

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
