import { type SkippedAttempt, workflowBudgetConfigError } from '../errors/index.ts';
import type { Exchange } from '../pipeline/exchange.ts';
import type { Prepared } from '../pipeline/prepare.ts';
import type { SlotGuard, StreamBudget } from '../routing/plan.ts';
import type { RuntimeSlot } from '../snapshot/runtime.ts';
import { capHold, type PrimaryHold } from './admission.ts';
import { type SpendContext, skipMessage, take } from './context.ts';
import { estimate, streamBlock } from './estimate.ts';
import { type CapHold, release } from './holding.ts';
import type { CapRule } from './rules.ts';

/** What the guard shares with the run that made it: the holds of this exchange. */
export interface SlotHolds {
  /** Slot name → its caps' hold. The primary's, when admission took it, starts here. */
  slots: Map<string, CapHold>;
  /** The project caps' hold (a stream extends it with the slot's). */
  project: CapHold | undefined;
}

/**
 * Per-slot spend caps for the failover chain: each capped slot holds its estimate (for the request
 * as it will be sent) when the chain reaches it, and is skipped when a cap refuses; a slot that
 * failed gives its hold back at once; a stream extends its slot's and the project's holds as its
 * output grows, or is stopped. Throws 422 workflow_budget_config_error when a capped slot has no
 * pricing for the request (it could never be evaluated).
 */
export function slotGuard(
  ctx: SpendContext,
  ex: Exchange,
  p: Prepared,
  bySlot: Map<string, CapRule[]>,
  primary: PrimaryHold,
  holds: SlotHolds,
): SlotGuard {
  const project = ex.auth.project;
  const pc = project.config;
  const estimates = new Map<string, number>();
  const unpriced: SkippedAttempt[] = [];
  for (const slot of p.plan.slots) {
    if (!bySlot.has(slot.slot) || holds.slots.has(slot.slot)) continue;
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
      if (holds.slots.has(slot.slot)) return { skip: false };
      const rules = bySlot.get(slot.slot);
      if (!rules) return { skip: false };
      const hold = capHold(ctx, pc.id, rules, estimates.get(slot.slot)!);
      const taken = await take(
        ctx,
        pc.id,
        { rates: [], caps: hold.leases.map((lease) => ({ lease, micros: hold.micros })) },
        ['spend_caps'],
      );
      if (!taken) return { skip: false };
      if (taken.ok) {
        holds.slots.set(slot.slot, hold);
        return { skip: false };
      }
      return { skip: true, message: skipMessage(rules[taken.kind === 'cap' ? taken.index : 0]!, slot.slot) };
    },
    release(slot) {
      const hold = holds.slots.get(slot.slot);
      if (!hold) return;
      holds.slots.delete(slot.slot);
      release(ctx.leases, hold, 0, ex.id);
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
  const slotHeld = holds.slots.get(slot.slot);
  const projectHeld = holds.project;
  if (!block || (!slotHeld && !projectHeld)) return undefined;
  const caps = [...(slotHeld?.leases ?? []), ...(projectHeld?.leases ?? [])];
  const budget: StreamBudget = {
    outputTokens: block.tokens,
    extend: async () => {
      // The slot's and the project's caps grow together, or neither does.
      let taken: Awaited<ReturnType<typeof take>>;
      try {
        taken = await take(
          ctx,
          ex.auth.project.config.id,
          { rates: [], caps: caps.map((lease) => ({ lease, micros: block.micros })) },
          ['spend_caps'],
        );
      } catch {
        return {
          ok: false,
          code: 'service_unavailable',
          message: 'The stream was stopped: spend caps cannot be checked right now.',
        };
      }
      if (taken && !taken.ok && taken.kind === 'cap') {
        const slotCaps = slotHeld?.leases.length ?? 0;
        if (taken.index < slotCaps) {
          const c = slotHeld!.rules[taken.index]!.config;
          return {
            ok: false,
            code: 'workflow_budget_exceeded',
            message: `The stream was stopped: spend cap ${c.id} (${c.period}, $${c.limitUsd}) on ${slot.slot} is reached.`,
          };
        }
        const c = projectHeld!.rules[taken.index - slotCaps]!.config;
        return {
          ok: false,
          code: 'project_budget_exceeded',
          message: `The stream was stopped: the project's ${c.period} spend cap of $${c.limitUsd} is reached.`,
        };
      }
      if (taken?.ok) {
        if (slotHeld) slotHeld.micros += block.micros;
        if (projectHeld) projectHeld.micros += block.micros;
      }
      return { ok: true, outputTokens: budget.outputTokens + block.tokens };
    },
  };
  return budget;
}
