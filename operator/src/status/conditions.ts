import { canonicalJson } from '#contract';
import type { Condition } from '../resources/common.ts';

/**
 * Sets a condition in a list the way apimachinery's meta.SetStatusCondition does:
 * lastTransitionTime changes only when the status changes; reason, message and
 * observedGeneration are updated in place. Other conditions are kept, order is stable.
 */
export function setCondition(
  existing: readonly Condition[] | undefined,
  next: Omit<Condition, 'lastTransitionTime'>,
  now: Date,
): Condition[] {
  const list = [...(existing ?? [])];
  const i = list.findIndex((c) => c.type === next.type);
  const prev = i >= 0 ? list[i] : undefined;
  const lastTransitionTime =
    prev && prev.status === next.status
      ? prev.lastTransitionTime
      : now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const merged: Condition = { ...next, lastTransitionTime };
  if (i >= 0) list[i] = merged;
  else list.push(merged);
  return list;
}

export const findCondition = (list: readonly Condition[] | undefined, type: string): Condition | undefined =>
  list?.find((c) => c.type === type);

/** Structural equality of two status values (key order does not matter; undefined fields are absent). */
export const sameStatus = (a: unknown, b: unknown): boolean =>
  canonicalJson(stripUndefined(a ?? {})) === canonicalJson(stripUndefined(b ?? {}));

function stripUndefined(v: unknown): unknown {
  return JSON.parse(JSON.stringify(v ?? null)) as unknown;
}

/**
 * A JSON merge patch (RFC 7386) that turns `current` into `desired` at the top level of status:
 * fields missing from `desired` are set to null so the server removes them.
 */
export function statusMergePatch(
  current: Record<string, unknown> | undefined,
  desired: Record<string, unknown>,
): { status: Record<string, unknown> } {
  const patch: Record<string, unknown> = {};
  for (const k of Object.keys(current ?? {}))
    if (!(k in desired) || desired[k] === undefined) patch[k] = null;
  for (const [k, v] of Object.entries(desired)) if (v !== undefined) patch[k] = v;
  return { status: patch };
}

/** Whether a Ready transition deserves an Event: a new status or a new reason. */
export function readyTransition(
  before: Condition | undefined,
  after: Condition,
): { type: 'Normal' | 'Warning'; reason: string } | undefined {
  if (before && before.status === after.status && before.reason === after.reason) return undefined;
  return { type: after.status === 'True' ? 'Normal' : 'Warning', reason: after.reason };
}
