import type { Exchange } from '../pipeline/exchange.ts';
import type { Prepared } from '../pipeline/prepare.ts';
import type { Completion, PipelineStages } from '../pipeline/stages.ts';
import type { ChatRequest, ChatResult } from '../providers/types.ts';
import type { SlotGuard } from '../routing/plan.ts';
import type { RuntimeSlot } from '../snapshot/runtime.ts';

/**
 * The spend caps of one summary call. It runs on an exchange of its own (its request_log_id), so
 * the spend stages reserve and settle it like an async job: the project's caps when its chain
 * reaches the first slot, each slot's caps as the chain reaches it.
 */
export interface SummarySpend {
  /** For the summary's failover chain; undefined when nothing caps it. */
  guard: SlotGuard | undefined;
  /** The call answered on `slot`: its cost (null when unpriced) settles the slot's and the project's caps. */
  answered(slot: RuntimeSlot, result: ChatResult, costMicros: number | null): void;
  /** The call failed or was refused: whatever it still holds is given back. Idempotent. */
  failed(): void;
}

/**
 * Opens the spend of the summary call `id` (its request_log_id) sending `req`. Throws the
 * GatewayErrors a request gets where its chain starts (a cap without pricing, an outage policy).
 */
export type OpenSummarySpend = (id: string, req: ChatRequest) => SummarySpend;

const NEVER = new AbortController().signal;

/**
 * Session deps' `summarySpend`: the summary call of a session turned by `ex`/`p` goes through the
 * FINAL pipeline stages' slotGuard and completed (read when the summary runs: sessions are composed
 * before the spend stages exist). The session and cache stages key their state by exchange, so the
 * summary's fresh exchange is nothing to them.
 */
export function summarySpendVia(
  final: () => PipelineStages | undefined,
): (ex: Exchange, p: Prepared) => OpenSummarySpend {
  return (ex, p) => {
    const auth = ex.auth;
    const keyId = ex.record.keyId;
    return (id, req) => {
      const stages = final();
      const fresh: Exchange = {
        id,
        surface: 'async',
        startedAt: performance.now(),
        auth,
        signal: NEVER,
        record: {
          surface: 'other',
          logType: 'session_summary',
          project: auth.project.config.id,
          keyId,
          workflow: p.workflowName,
        },
      };
      // Estimates price the summary request, not the user's.
      const summary: Prepared = {
        ...p,
        request: req,
        plan: { ...p.plan, requestType: 'chat', structured: undefined, json: false, guard: undefined },
        customerData: {},
      };
      // A throw here has given back what it took (the spend stages drop on a failed guard).
      const guard = stages?.slotGuard(fresh, summary);
      let open = stages !== undefined;
      const close = (done: Completion): void => {
        if (!open) return;
        open = false;
        stages!.completed(fresh, summary, done);
      };
      return {
        guard,
        answered(slot, result, costMicros) {
          // commit and completed settle with the record's cost, so it is set first.
          fresh.record.costMicros = costMicros;
          guard?.commit(slot, result.usage);
          close({ ok: true, result, usage: result.usage, fromCache: false });
        },
        failed() {
          close({ ok: false, usage: undefined });
        },
      };
    };
  };
}
