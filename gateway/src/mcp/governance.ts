import type { Logger } from 'pino';
import { Counter, Histogram, type Registry } from 'prom-client';
import { usdToMicros } from '#contract';
import { randomHex } from '../domain/ids.ts';
import type { ToolAdmit, ToolHold } from '../spend/tool-admission.ts';
import { ToolRefusal } from '../spend/tool-admission.ts';
import { eventEntry } from '../state/event-entry.ts';
import type { RequestLogEntry, RuntimeState } from '../state/types.ts';
import {
  priceOf,
  type ToolCallEnd,
  type ToolCallPlan,
  ToolCallRefused,
  type ToolCalls,
  type ToolCallTicket,
  type ToolOutcome,
} from './tool-call.ts';
import type { McpCaller } from './types.ts';

const HOUR_MS = 3_600_000;

export interface GovernanceDeps {
  /** The limits-and-caps feature's admission for tool calls (spend/tool-admission.ts). */
  admitTool(t: ToolAdmit): ToolHold | Promise<ToolHold>;
  state: RuntimeState;
  registry: Registry;
  logger: Logger;
  now: () => number;
}

function metricsOf(registry: Registry) {
  return {
    calls: new Counter({
      name: 'switchyard_mcp_tool_calls_total',
      help: 'MCP tool calls through the gateway, by project, server, tool and outcome.',
      labelNames: ['project', 'server', 'tool', 'outcome'] as const,
      registers: [registry],
    }),
    duration: new Histogram({
      name: 'switchyard_mcp_tool_call_duration_seconds',
      help: 'Duration of one MCP tool call as the gateway saw it, upstream included, by server and outcome.',
      labelNames: ['server', 'outcome'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      registers: [registry],
    }),
    cost: new Counter({
      name: 'switchyard_mcp_tool_cost_usd_total',
      help: 'USD charged for MCP tool calls (their configured prices), by project and server.',
      labelNames: ['project', 'server'] as const,
      registers: [registry],
    }),
  };
}

/**
 * Tool calls governed like model calls: admitted through the limits-and-caps leases (price held on
 * the spend caps, a unit of each request limit and of the server's calls per minute), and each one
 * recorded once when it ends: a `tool_call` request-log entry, usage under `mcp:<server>` / tool,
 * metrics, and an `execute_tool` span under the request's span.
 */
export function governedToolCalls(d: GovernanceDeps): ToolCalls {
  const m = metricsOf(d.registry);

  const record = (
    caller: McpCaller,
    plan: ToolCallPlan,
    end: ToolCallEnd,
    errorCode: string | null,
  ): void => {
    const server = plan.server.config.name;
    const projectId = caller.projectId;
    const outcome: ToolOutcome = end.outcome;
    m.calls.inc({ project: projectId, server, tool: plan.tool, outcome });
    m.duration.observe({ server, outcome }, end.durationMs / 1000);
    const micros = end.costUsd === null ? 0 : usdToMicros(end.costUsd);
    if (micros > 0) m.cost.inc({ project: projectId, server }, micros / 1_000_000);
    const now = d.now();
    const cfg = caller.project.config;
    const log: RequestLogEntry = eventEntry({
      request_log_id: `${caller.requestId}:${randomHex(4)}`,
      type: 'tool_call',
      time: new Date(now).toISOString(),
      project_id: projectId,
      api_key_id: caller.keyId,
      surface: 'mcp',
      method: 'tools/call',
      path: '/v1/mcp',
      status: outcome === 'success' ? 'success' : 'error',
      outcome,
      http_status: 200,
      error_code: errorCode,
      used_provider: `mcp:${server}`,
      used_model: plan.tool,
      cost_usd: end.costUsd,
      duration_ms: Math.round(end.durationMs * 1000) / 1000,
      trace_id: caller.trace.traceId,
      details: {
        server,
        tool: plan.tool,
        name: plan.prefixedName,
        argument_bytes: end.argumentBytes,
        ...(caller.sessionId ? { mcp_session_id: caller.sessionId } : {}),
        ...(end.error ? { error: end.error } : {}),
      },
      ...(cfg.requestLogs.bodies ? { bodies: { request: plan.arguments ?? {}, response: end.result } } : {}),
    });
    d.state.write({
      projectId,
      log,
      usage:
        end.costUsd === null
          ? undefined
          : {
              hourStartSec: Math.floor(now / HOUR_MS) * 3600,
              workflow: '',
              provider: `mcp:${server}`,
              model: plan.tool,
              requests: 1,
              prompt_tokens: 0,
              completion_tokens: 0,
              total_tokens: 0,
              cost_micros: micros,
            },
      logCap: cfg.requestLogs.maxEntries,
    });
  };

  return {
    async admit(caller, plan): Promise<ToolCallTicket> {
      const price = priceOf(plan);
      const micros = usdToMicros(price);
      const span = caller.trace.tool({
        name: plan.prefixedName,
        server: plan.server.config.name,
        callId: plan.callId,
        sessionId: caller.sessionId,
      });
      let hold: ToolHold;
      try {
        hold = await d.admitTool({
          id: caller.requestId,
          project: caller.project.config,
          key: caller.key,
          server: plan.server.config.name,
          callsPerMinute: plan.server.config.callsPerMinute,
          micros,
        });
      } catch (err) {
        const refusal = err instanceof ToolRefusal ? err : undefined;
        const message =
          refusal?.message ??
          'Spend caps and rate limits cannot be checked right now; the call was not sent.';
        const code = refusal?.error.code ?? 'service_unavailable';
        span.end('refused', message);
        record(
          caller,
          plan,
          {
            outcome: 'refused',
            durationMs: 0,
            argumentBytes: plan.arguments ? Buffer.byteLength(JSON.stringify(plan.arguments)) : 0,
            costUsd: null,
            result: { content: [{ type: 'text', text: message }], isError: true },
            error: message,
          },
          code,
        );
        throw new ToolCallRefused(code, message);
      }
      return {
        end(end) {
          hold.finish(end.costUsd === null ? 0 : micros);
          span.end(end.outcome, end.outcome === 'success' ? undefined : (end.error ?? end.outcome));
          record(caller, plan, end, null);
        },
      };
    },
  };
}
