import type { Verdict } from '../compiler/types.ts';
import { generatedKeySecretName } from '../keys/secret-fields.ts';
import { previousValidUntil, ROTATION_ANNOTATION } from '../keys/secret-plan.ts';
import type { KubeObject } from '../kube/client.ts';
import type { Informer } from '../kube/informer.ts';
import type { McpProber } from '../mcp/prober.ts';
import type { SwitchyardKind, SwitchyardObject } from '../resources/index.ts';
import type { CapSpend, WebhookHealth } from '../spend/spend.ts';
import { type AnyStatusFields, currentStatus, type StatusFields } from './desired.ts';
import { type ConditionInput, mcpProbeStatus } from './mcp.ts';

/** One object of the last compile with the compiler's verdict on it. */
export type Judged = {
  obj: KubeObject;
  kind: SwitchyardKind;
  /** The object as its schema reads it; absent when the spec did not parse (InvalidSpec). */
  parsed: SwitchyardObject | undefined;
  verdict: Pick<Verdict, 'ok' | 'reason' | 'message' | 'details'>;
};

/** What the controller observed besides the compile: Secrets, spend, webhook health, MCP probes. */
export interface Observed {
  secrets: Informer;
  spend: ReadonlyMap<string, CapSpend>;
  webhooks: ReadonlyMap<string, WebhookHealth>;
  mcp: McpProber;
}

/** Kind-specific status fields and conditions computed outside the compiler. */
export function statusExtras(
  j: Judged,
  now: Date,
  seen: Observed,
  current?: unknown,
): { fields: AnyStatusFields; conditions: ConditionInput[] } {
  const o = j.parsed;
  switch (o?.kind) {
    case 'Workflow':
      return {
        fields: {
          apiName: o.spec.name ?? o.metadata.name,
          route: `${o.spec.provider}/${o.spec.model}`,
          backups: o.spec.backups?.length ?? 0,
        } satisfies StatusFields<'Workflow'>,
        conditions: [],
      };
    case 'ApiKey': {
      const ref = o.spec.secretRef;
      const secretName = ref?.name ?? generatedKeySecretName(o.metadata.name);
      const secret = seen.secrets.get(o.metadata.namespace, secretName);
      const gen = secret?.metadata.annotations?.[ROTATION_ANNOTATION];
      return {
        fields: {
          secretName,
          rotationGeneration: !ref && gen !== undefined ? Number(gen) : undefined,
          previousKeyValidUntil: previousValidUntil(secret, now),
        } satisfies StatusFields<'ApiKey'>,
        conditions: [],
      };
    }
    case 'Project': {
      const w = seen.webhooks.get(`${o.metadata.namespace}.${o.metadata.name}`);
      return {
        fields: w ? ({ webhooks: w } satisfies Partial<StatusFields<'Project'>>) : {},
        conditions: [],
      };
    }
    case 'SpendCap': {
      const s = j.verdict.ok ? seen.spend.get(`${o.metadata.namespace}/${o.metadata.name}`) : undefined;
      return {
        fields: s
          ? ({ spentUsd: s.spentUsd, state: s.state, resetAt: s.resetAt } satisfies StatusFields<'SpendCap'>)
          : {},
        conditions: [],
      };
    }
    case 'MCPServer': {
      const source = `${o.metadata.namespace}/${o.metadata.name}`;
      const { fields, reachable } = mcpProbeStatus(seen.mcp.get(source), j.verdict.ok, {
        status: currentStatus('MCPServer', current),
        generation: j.obj.metadata.generation,
      });
      return { fields, conditions: [reachable] };
    }
    default:
      return { fields: {}, conditions: [] };
  }
}
