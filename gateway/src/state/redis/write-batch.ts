import { logEntryJson } from '../entry-json.ts';
import { APPLIED_TTL_SEC, STATE_KEYS, USAGE_TTL_SEC } from '../keys.ts';
import type { StateWrite } from '../types.ts';
import { forEachUsageField } from '../usage-fields.ts';

/** Acknowledged batch ids sent with one batch at most (the rest go with the next). */
export const MAX_ACKS = 256;

/** What makes one batch exactly once: its writer, its id, and the ids whose replies the writer saw. */
export interface BatchIdentity {
  writer: string;
  id: string;
  acks: readonly string[];
}

/** One script call (write-script.ts) and the writes that could not be serialised into it. */
export interface BatchCall {
  keys: string[];
  args: Array<string | number>;
  bad: { s: StateWrite; err: unknown }[];
}

/** Adds a usage field's increment to a batch's hour (a plain function: no closure per write). */
function addField(fields: Map<string, number>, field: string, by: number): void {
  fields.set(field, (fields.get(field) ?? 0) + by);
}

/**
 * One project's writes as one script call's keys and arguments, in the layout write-script.ts
 * documents. Every key carries the project's hash tag, so the call stays in one cluster slot.
 */
export function batchCall(
  projectId: string,
  batch: readonly StateWrite[],
  identity: BatchIdentity,
): BatchCall {
  const entries: string[] = [];
  const hours = new Map<string, Map<string, number>>();
  const bad: { s: StateWrite; err: unknown }[] = [];
  let logCap = 1;
  for (const s of batch) {
    if (s.log) {
      try {
        entries.push(logEntryJson(s.log));
      } catch (err) {
        // Not expected (logEntryJson stores what it cannot serialise without it): no retry will help.
        bad.push({ s, err });
        continue;
      }
      logCap = Math.max(logCap, s.logCap);
    }
    if (s.usage) {
      const key = STATE_KEYS.usage(projectId, s.usage.hourStartSec);
      let fields = hours.get(key);
      if (!fields) {
        fields = new Map();
        hours.set(key, fields);
      }
      forEachUsageField(s.usage, addField, fields);
    }
  }
  const keys = [STATE_KEYS.logs(projectId), STATE_KEYS.applied(projectId, identity.writer), ...hours.keys()];
  const args: Array<string | number> = [
    logCap,
    entries.length,
    identity.id,
    APPLIED_TTL_SEC,
    identity.acks.length,
    ...identity.acks,
    ...entries,
  ];
  for (const fields of hours.values()) {
    args.push(USAGE_TTL_SEC, fields.size);
    for (const [f, by] of fields) args.push(f, by);
  }
  return { keys, args, bad };
}
