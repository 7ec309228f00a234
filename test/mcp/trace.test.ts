/**
 * An MCP tool call's `execute_tool` span (GenAI conventions), a child of the request's server span,
 * in the trace the caller sent: exported over OTLP to a real OpenTelemetry Collector.
 */
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTracing, type Tracing } from '#gateway/tracing/index';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { apiKey, mcpServer, project } from '../harness/manifests.ts';
import { type Collector, startCollector } from '../tracing/collector.ts';
import { startUpstream, type Upstream } from './upstream.ts';

const KEY = 'sy_live_TracedMcpKey0123456789abcdefghijkl';
let collector: Collector;
let tracing: Tracing;
let upstream: Upstream;
let gw: RunningGateway;

beforeAll(async () => {
  collector = await startCollector();
  tracing = await startTracing(
    { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint, OTEL_BSP_SCHEDULE_DELAY: '50' },
    pino({ level: 'silent' }),
  );
  upstream = await startUpstream('alpha');
  gw = await startGateway(
    [
      project('app', { outboundFetch: { allowPrivateNetworks: true } }),
      ...apiKey('traced', KEY, { scopes: ['mcp'], toolGrants: ['alpha__*'] }),
      ...mcpServer('alpha', upstream.url, { spec: { toolPrefix: 'alpha' } }),
    ],
    { tracing },
  );
}, 60_000);
afterAll(async () => {
  await gw?.close();
  await upstream?.close();
  await collector?.close();
});

it('execute_tool under the request span, continuing the caller’s trace', async () => {
  const traceId = randomBytes(16).toString('hex');
  const parent = randomBytes(8).toString('hex');
  const res = await fetch(`${gw.url}/v1/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${KEY}`,
      'content-type': 'application/json',
      traceparent: `00-${traceId}-${parent}-01`,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 'call-1',
      method: 'tools/call',
      params: { name: 'alpha__echo', arguments: { text: 't' } },
    }),
  });
  expect(res.status).toBe(200);
  await tracing.flush();
  const [server, tool] = await collector.waitFor((spans) => {
    const s = spans.find((x) => x.traceId === traceId && x.kind === 'server');
    const t = spans.find((x) => x.traceId === traceId && x.name === 'execute_tool alpha__echo');
    return s && t ? [s, t] : undefined;
  });
  expect(server!.parentSpanId).toBe(parent);
  expect(tool!.parentSpanId).toBe(server!.spanId);
  expect(tool!.kind).toBe('internal');
  expect(tool!.attributes).toMatchObject({
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': 'alpha__echo',
    'gen_ai.tool.call.id': 'call-1',
    'mcp.method.name': 'tools/call',
    'switchyard.mcp.server': 'alpha',
    'switchyard.outcome': 'success',
  });
});
