import type { z } from 'zod';
import type { Verdict } from '../compiler/types.ts';
import { apiKeyStatus } from '../resources/apikey.ts';
import type { Condition } from '../resources/common.ts';
import { guardrailStatus } from '../resources/guardrail.ts';
import type { SwitchyardKind, SwitchyardObject } from '../resources/index.ts';
import { mcpServerStatus } from '../resources/mcpserver.ts';
import { projectStatus } from '../resources/project.ts';
import { providerStatus } from '../resources/provider.ts';
import { spendCapStatus } from '../resources/spendcap.ts';
import { workflowStatus } from '../resources/workflow.ts';
import { setCondition } from './conditions.ts';

/** The status of one kind, as its zod status schema (the CRD's source) defines it. */
export type KindStatus<K extends SwitchyardKind> = NonNullable<
  Extract<SwitchyardObject, { kind: K }>['status']
>;
/** Fields of one kind's status the operator owns, besides conditions and observedGeneration. */
export type StatusFields<K extends SwitchyardKind> = Omit<KindStatus<K>, 'conditions' | 'observedGeneration'>;
/** Some of the fields of some kind: what a caller that switches over kinds hands in. */
export type AnyStatusFields = { [K in SwitchyardKind]: Partial<StatusFields<K>> }[SwitchyardKind];

export const STATUS_SCHEMAS: { [K in SwitchyardKind]: z.ZodType<KindStatus<K>> } = {
  Project: projectStatus,
  Provider: providerStatus,
  Workflow: workflowStatus,
  ApiKey: apiKeyStatus,
  SpendCap: spendCapStatus,
  Guardrail: guardrailStatus,
  MCPServer: mcpServerStatus,
};

type Details = Verdict['details'];
const text = (v: Details[string] | undefined): string | undefined => (typeof v === 'string' ? v : undefined);
const count = (v: Details[string] | undefined): number | undefined => (typeof v === 'number' ? v : undefined);

/** Status fields taken from the compiler's verdict details, per kind. */
const FROM_DETAILS: { [K in SwitchyardKind]: (d: Details) => StatusFields<K> } = {
  Project: (d) => ({
    projectId: text(d.projectId),
    workflows: count(d.workflows),
    apiKeys: count(d.apiKeys),
  }),
  Provider: (d) => ({ models: count(d.models) }),
  Workflow: (d) => ({ apiName: text(d.apiName), route: text(d.route), backups: count(d.backups) }),
  ApiKey: (d) => ({ keyPrefix: text(d.keyPrefix) }),
  SpendCap: () => ({}),
  Guardrail: (d) => ({ rules: count(d.rules), ignoredDisables: text(d.ignoredDisables) }),
  MCPServer: (d) => ({ projectId: text(d.projectId), toolPrefix: text(d.toolPrefix) }),
};

export interface DesiredStatusInput<K extends SwitchyardKind> {
  kind: K;
  generation: number | undefined;
  current: Pick<KindStatus<K>, 'conditions'> | undefined;
  verdict: Pick<Verdict, 'ok' | 'reason' | 'message' | 'details'>;
  /** Kind-specific fields computed elsewhere (spend, key secret, workflow route); details win. */
  extra: Partial<StatusFields<K>>;
  /** Conditions besides Ready observed elsewhere (an MCPServer's Reachable). */
  conditions?: readonly Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>[];
  now: Date;
}

const READY_MESSAGE_MAX = 2000;

const defined = (o: object): Record<string, unknown> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/**
 * Pure: the status an object should have, keeping lastTransitionTime when Ready did not flip.
 * Parsed by the kind's status schema, so what is written is what the CRD accepts.
 */
export function desiredStatus<K extends SwitchyardKind>(input: DesiredStatusInput<K>): KindStatus<K> {
  const { verdict } = input;
  let conditions = setCondition(
    input.current?.conditions,
    {
      type: 'Ready',
      status: verdict.ok ? 'True' : 'False',
      reason: verdict.reason,
      message: verdict.message.slice(0, READY_MESSAGE_MAX),
      ...(input.generation !== undefined ? { observedGeneration: input.generation } : {}),
    },
    input.now,
  );
  const webhooks =
    input.kind === 'Project' ? (input.extra as Partial<StatusFields<'Project'>>).webhooks : undefined;
  if (webhooks)
    conditions = setCondition(conditions, webhooksCondition(webhooks, input.generation), input.now);
  for (const c of input.conditions ?? [])
    conditions = setCondition(
      conditions,
      { ...c, ...(input.generation !== undefined ? { observedGeneration: input.generation } : {}) },
      input.now,
    );
  const schema: z.ZodType<KindStatus<K>> = STATUS_SCHEMAS[input.kind];
  return schema.parse({
    ...defined(input.extra),
    ...defined(FROM_DETAILS[input.kind](verdict.details)),
    ...(input.generation !== undefined ? { observedGeneration: input.generation } : {}),
    conditions,
  });
}

/** `WebhooksDelivering`: False while a receiver has disabled an endpoint (410); dead letters in the message. */
function webhooksCondition(
  w: NonNullable<StatusFields<'Project'>['webhooks']>,
  generation: number | undefined,
) {
  const dead = `${w.deadLetters} dead letter${w.deadLetters === 1 ? '' : 's'} waiting for replay`;
  return {
    type: 'WebhooksDelivering',
    status: w.disabledEndpoints.length ? ('False' as const) : ('True' as const),
    reason: w.disabledEndpoints.length ? 'EndpointDisabled' : w.deadLetters ? 'DeadLetters' : 'Delivering',
    message: w.disabledEndpoints.length
      ? `Disabled after 410 Gone: ${w.disabledEndpoints.join(', ')}; ${dead}.`.slice(0, READY_MESSAGE_MAX)
      : `Every endpoint is enabled; ${dead}.`,
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
  };
}

/** The current status of an object as its kind's schema reads it; unreadable status counts as none. */
export function currentStatus<K extends SwitchyardKind>(kind: K, raw: unknown): KindStatus<K> | undefined {
  const schema: z.ZodType<KindStatus<K>> = STATUS_SCHEMAS[kind];
  const parsed = schema.safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}
