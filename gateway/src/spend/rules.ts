import { periodWindow, type SnapshotProject, SPEND_KEYS, type SpendCapConfig, usdToMicros } from '#contract';
import type { CapRef } from './store.ts';

/** A spend cap of the snapshot with its limit in micro-USD. */
export interface CapRule {
  config: SpendCapConfig;
  limitMicros: number;
}

/** A project's caps sorted for the request path: project caps, and slot caps by workflow then slot. */
export interface ProjectCaps {
  project: CapRule[];
  /** workflow name → slot name → caps. */
  slots: Map<string, Map<string, CapRule[]>>;
}

const compiled = new WeakMap<SnapshotProject, ProjectCaps>();

/** Compiled once per snapshot (the snapshot's project object is the cache key). */
export function capsOf(project: SnapshotProject): ProjectCaps {
  let c = compiled.get(project);
  if (c) return c;
  c = { project: [], slots: new Map() };
  for (const config of project.spendCaps) {
    const rule = { config, limitMicros: usdToMicros(config.limitUsd) };
    if (config.scope === 'project') c.project.push(rule);
    else {
      const wf = config.workflow ?? '';
      let bySlot = c.slots.get(wf);
      if (!bySlot) {
        bySlot = new Map();
        c.slots.set(wf, bySlot);
      }
      const list = bySlot.get(config.slot ?? 'primary') ?? [];
      list.push(rule);
      bySlot.set(config.slot ?? 'primary', list);
    }
  }
  compiled.set(project, c);
  return c;
}

/** Keys of a finished period stay a day, so a late settle or the operator's last read still finds them. */
const KEEP_AFTER_SEC = 86_400;

/** A rule's current period as last computed: the key and bounds change only when a period ends. */
interface PeriodMemo {
  projectId: string;
  startMs: number;
  endMs: number;
  key: string;
  resetAt: Date;
}
const periods = new WeakMap<CapRule, PeriodMemo>();

/** The cap's keys and bounds in the period that contains `nowMs`. */
export function capRef(projectId: string, rule: CapRule, nowMs: number): CapRef & { resetAt: Date } {
  let m = periods.get(rule);
  if (!m || nowMs < m.startMs || nowMs >= m.endMs || m.projectId !== projectId) {
    const c = rule.config;
    const w = periodWindow(c.period, new Date(nowMs));
    m = {
      projectId,
      startMs: w.start.getTime(),
      endMs: w.end.getTime(),
      key:
        c.scope === 'workflow'
          ? SPEND_KEYS.slot(projectId, c.workflow ?? '', c.slot ?? 'primary', c.period, w.start)
          : SPEND_KEYS.project(projectId, c.period, w.start),
      resetAt: w.end,
    };
    periods.set(rule, m);
  }
  return {
    key: m.key,
    limitMicros: rule.limitMicros,
    ttlSec: Math.ceil((m.endMs - nowMs) / 1000) + KEEP_AFTER_SEC,
    resetAt: m.resetAt,
  };
}
