import type { Verdict } from '../compiler/types.ts';
import type { Condition } from '../resources/common.ts';
import { setCondition } from './conditions.ts';

/** Fields of one object's status the operator owns, besides conditions and observedGeneration. */
export type StatusFields = Record<string, string | number | undefined>;

export interface DesiredStatusInput {
  kind: string;
  generation: number | undefined;
  current: Record<string, unknown> | undefined;
  verdict: Pick<Verdict, 'ok' | 'reason' | 'message' | 'details'>;
  /** Kind-specific fields computed elsewhere (spend, key secret, workflow route). */
  extra: StatusFields;
  now: Date;
}

const READY_MESSAGE_MAX = 2000;

/** Status fields taken from the compiler's verdict details, per kind. */
const DETAIL_FIELDS: Record<string, readonly string[]> = {
  Project: ['projectId', 'workflows', 'apiKeys'],
  Provider: ['models'],
  Workflow: ['apiName', 'route', 'backups'],
  ApiKey: ['keyPrefix'],
  SpendCap: [],
};

/** Pure: the status an object should have, keeping lastTransitionTime when Ready did not flip. */
export function desiredStatus(input: DesiredStatusInput): Record<string, unknown> {
  const { verdict } = input;
  const fields: Record<string, unknown> = {};
  for (const f of DETAIL_FIELDS[input.kind] ?? []) {
    const v = verdict.details[f];
    if (v !== undefined) fields[f] = v;
  }
  for (const [k, v] of Object.entries(input.extra))
    if (v !== undefined && fields[k] === undefined) fields[k] = v;
  const conditions = setCondition(
    input.current?.conditions as Condition[] | undefined,
    {
      type: 'Ready',
      status: verdict.ok ? 'True' : 'False',
      reason: verdict.reason,
      message: verdict.message.slice(0, READY_MESSAGE_MAX),
      ...(input.generation !== undefined ? { observedGeneration: input.generation } : {}),
    },
    input.now,
  );
  return {
    ...fields,
    ...(input.generation !== undefined ? { observedGeneration: input.generation } : {}),
    conditions,
  };
}
