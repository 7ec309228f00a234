import { type SkippedAttempt, workflowBudgetConfigError } from '../errors/index.ts';
import type { Exchange } from '../pipeline/exchange.ts';
import type { Prepared } from '../pipeline/prepare.ts';
import type { SlotGuard, StreamBudget } from '../routing/plan.ts';
import type { RuntimeSlot } from '../snapshot/runtime.ts';
import { decideOnOutage } from '../state/failure-policy.ts';
import type { PrimaryHold } from './admission.ts';
import { deadlineOf, type HeldCaps, reserve, type SpendContext, skipMessage } from './context.ts';
import { estimate, streamBlock } from './estimate.ts';
import { type CapRule, capRef } from './rules.ts';

/** What the guard shares with the run that made it: the slots holding a reservation of this exchange. */
export interface SlotHolds {
  /** Slot name → its caps' reservation. The primary's, when admission reserved it, starts here. */
  reserved: Map<string, HeldCaps>;
  /** The project caps' reservation (a stream extends it with the slot's). */
  project: HeldCaps | undefined;
}

/**
 * Per-slot spend caps for the failover chain: each capped slot reserves its estimate (for the
 * request as it will be sent) when the chain reaches it, and is skipped when a cap refuses; a slot
 * that failed gives its reservation back at once; a stream extends its slot's and the project's
 * reservations as its output grows, or is stopped. Throws 422 workflow_budget_config_error when a
 * capped slot has no pricing for the request (it could never be evaluated).
 */
export function slotGuard(
  ctx: SpendContext,
  ex: Exchange,
  p: Prepared,
  bySlot: Map<string, CapRule[]>,
  primary: PrimaryHold,
  holds: SlotHolds,
  release: (held: HeldCaps) => void,
): SlotGuard {
  const project = ex.auth.project;
  const pc = project.config;
  const where = { id: pc.id, logCap: pc.requestLogs.maxEntries };
  const estimates = new Map<string, number>();
  const unpriced: SkippedAttempt[] = [];
  for (const slot of p.plan.slots) {
    if (!bySlot.has(slot.slot) || holds.reserved.has(slot.slot)) continue;
    const e = estimate(p.request, project, slot).micros;
    if (e !== null) estimates.set(slot.slot, e);
    else
      unpriced.push({
        provider: slot.provider,
        model: slot.model,
        status: 'skipped',
        reason: {
          message: `${slot.slot} is capped but model "${slot.model}" has no pricing for this request`,
        },
      });
  }
  if (unpriced.length) throw workflowBudgetConfigError(p.workflowName ?? '', unpriced);

  return {
    async check(slot) {
      if (slot.slot === 'primary' && primary.kind === 'skip') return { skip: true, message: primary.message };
      if (holds.reserved.has(slot.slot)) return { skip: false };
      const rules = bySlot.get(slot.slot);
      if (!rules) return { skip: false };
      const now = ctx.now();
      const hc: HeldCaps = {
        rules,
        caps: rules.map((r) => capRef(pc.id, r, now)),
        micros: estimates.get(slot.slot)!,
      };
      const res = await reserve(
        ctx,
        ex.id,
        where,
        {
          member: ex.id,
          amountMicros: hc.micros,
          deadlineMs: deadlineOf(ctx, slot, now),
          nowMs: now,
          rates: [],
          caps: hc.caps,
        },
        rules,
        ['spend_caps'],
      );
      if (!res) return { skip: false };
      if (res.ok) {
        holds.reserved.set(slot.slot, hc);
        return { skip: false };
      }
      return { skip: true, message: skipMessage(rules[res.kind === 'cap' ? res.index : 0]!, slot.slot) };
    },
    release(slot) {
      const hc = holds.reserved.get(slot.slot);
      if (!hc) return;
      holds.reserved.delete(slot.slot);
      release(hc);
    },
    stream: (slot) => streamBudget(ctx, ex, p, slot, holds),
  };
}

/** A stream's allowance on `slot`: extended one block at a time, on the slot's and the project's caps together. */
export function streamBudget(
  ctx: SpendContext,
  ex: Exchange,
  p: Prepared,
  slot: RuntimeSlot,
  holds: SlotHolds,
): StreamBudget | undefined {
  const block = streamBlock(p.request, ex.auth.project, slot);
  const slotHeld = holds.reserved.get(slot.slot);
  const projectHeld = holds.project;
  if (!block || (!slotHeld && !projectHeld)) return undefined;
  const caps = [...(slotHeld?.caps ?? []), ...(projectHeld?.caps ?? [])];
  const budget: StreamBudget = {
    outputTokens: block.tokens,
    extend: async () => {
      const now = ctx.now();
      try {
        // One call for the slot's and the project's caps: both grow, or neither.
        const res = await ctx.store.reserve({
          member: ex.id,
          amountMicros: block.micros,
          deadlineMs: deadlineOf(ctx, slot, now),
          nowMs: now,
          rates: [],
          caps,
        });
        if (!res.ok && res.kind === 'cap') {
          const slotCaps = slotHeld?.caps.length ?? 0;
          if (res.index < slotCaps) {
            const c = slotHeld!.rules[res.index]!.config;
            return {
              ok: false,
              code: 'workflow_budget_exceeded',
              message: `The stream was stopped: spend cap ${c.id} (${c.period}, $${c.limitUsd}) on ${slot.slot} is reached.`,
            };
          }
          const c = projectHeld!.rules[res.index - slotCaps]!.config;
          return {
            ok: false,
            code: 'project_budget_exceeded',
            message: `The stream was stopped: the project's ${c.period} spend cap of $${c.limitUsd} is reached.`,
          };
        }
        if (slotHeld) slotHeld.micros += block.micros;
        if (projectHeld) projectHeld.micros += block.micros;
      } catch (err) {
        if (decideOnOutage('spend_caps', ctx.policy, ctx.outage, ctx.logger, err) === 'closed')
          return {
            ok: false,
            code: 'service_unavailable',
            message: 'The stream was stopped: spend caps cannot be checked right now.',
          };
      }
      return { ok: true, outputTokens: budget.outputTokens + block.tokens };
    },
  };
  return budget;
}
