import type { CallToolResult } from '@modelcontextprotocol/client';
import type { McpCaller } from './types.ts';
import type { UpstreamPool, UpstreamServer } from './upstreams.ts';
import { UpstreamUnavailable } from './upstreams.ts';

/** How a tool call ended, as the request log, the metrics and the span say it. */
export type ToolOutcome = 'success' | 'tool_error' | 'upstream_error' | 'timeout' | 'refused' | 'aborted';

export interface ToolCallPlan {
  server: UpstreamServer;
  /** The upstream's own name. */
  tool: string;
  prefixedName: string;
  arguments: Record<string, unknown> | undefined;
  /** The JSON-RPC id of the client's `tools/call`. */
  callId: string | number | undefined;
}

export interface ToolCallEnd {
  outcome: ToolOutcome;
  durationMs: number;
  argumentBytes: number;
  /** USD charged for the call, a decimal string ("0" for a free tool); null when it never reached the upstream. */
  costUsd: string | null;
  result: CallToolResult;
  /** Why it failed, in words (refusals, timeouts, an unreachable upstream). */
  error?: string;
}

/** A call admitted by the limits and caps: told once how it ended. */
export interface ToolCallTicket {
  end(end: ToolCallEnd): void;
}

/** Refused by a rate limit or a spend cap before reaching the upstream: the message says which. */
export class ToolCallRefused extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

/**
 * The governance of tool calls (limits, caps, request logs, metrics, spans), given to the service
 * by the composition root; `admit` throws ToolCallRefused.
 */
export interface ToolCalls {
  admit(caller: McpCaller, plan: ToolCallPlan): Promise<ToolCallTicket>;
}

/** Tool calls with no limits and no records (unit tests of the protocol). */
export const UNGOVERNED: ToolCalls = {
  admit: async () => ({ end: () => undefined }),
};

function toolError(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

function timeoutOf(plan: ToolCallPlan): number {
  return plan.server.config.tools[plan.tool]?.timeoutMs ?? plan.server.config.timeoutMs;
}

/** A tool without a price is free. */
export function priceOf(plan: ToolCallPlan): string {
  return plan.server.config.tools[plan.tool]?.priceUsd ?? '0';
}

/**
 * One `tools/call` through the gateway: admitted (or refused before the upstream is reached),
 * sent with the tool's timeout, and ended exactly once with what happened. Whatever the upstream
 * does, the client gets a result: a refusal, a timeout or an unreachable upstream is a tool error
 * naming it (`isError: true`), which a model can read and act on. An upstream's own JSON-RPC error
 * is rethrown for the service to relay.
 */
export async function callTool(
  pool: UpstreamPool,
  calls: ToolCalls,
  caller: McpCaller,
  plan: ToolCallPlan,
): Promise<CallToolResult> {
  const started = performance.now();
  const argumentBytes = plan.arguments ? Buffer.byteLength(JSON.stringify(plan.arguments)) : 0;
  let ticket: ToolCallTicket;
  try {
    ticket = await calls.admit(caller, plan);
  } catch (err) {
    if (!(err instanceof ToolCallRefused)) throw err;
    return toolError(err.message);
  }
  const timeoutMs = timeoutOf(plan);
  const end = (outcome: ToolOutcome, result: CallToolResult, error?: string) => {
    ticket.end({
      outcome,
      durationMs: performance.now() - started,
      argumentBytes,
      // A call that reached its upstream is charged; one that never left the gateway is not.
      costUsd: outcome === 'refused' || outcome === 'upstream_error' ? null : priceOf(plan),
      result,
      ...(error ? { error } : {}),
    });
    return result;
  };
  try {
    const result = await pool.callTool(plan.server, plan.tool, plan.arguments, {
      timeoutMs,
      signal: caller.signal,
    });
    return end(result.isError ? 'tool_error' : 'success', result);
  } catch (err) {
    const name = plan.server.config.name;
    if (err instanceof UpstreamUnavailable) return end('upstream_error', toolError(err.message), err.message);
    const e = err as { code?: unknown; message?: string };
    if (caller.signal.aborted) return end('aborted', toolError('The client went away.'), 'aborted');
    if (e.code === 'REQUEST_TIMEOUT' || e.code === -32001 || /timed? ?out/i.test(e.message ?? '')) {
      const text = `MCP server "${name}" did not answer ${plan.prefixedName} within ${timeoutMs} ms.`;
      return end('timeout', toolError(text), text);
    }
    if (typeof e.code === 'number' && e.code < 0 && e.code > -33000) {
      end('tool_error', toolError(e.message ?? 'error'), e.message);
      throw err;
    }
    const text = `MCP server "${name}" failed on ${plan.prefixedName}: ${e.message ?? String(err)}`;
    return end('upstream_error', toolError(text), text);
  }
}
