/**
 * OpenTelemetry traces end to end: a gateway with tracing on exports over OTLP/HTTP to a real
 * OpenTelemetry Collector (test/otelcol, built from Go modules) that writes what it receives to a
 * file; the spans are read back and checked parent by parent, attribute by attribute, against the
 * provider simulator (which records the headers it was sent) and a webhook receiver.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing, type Tracing } from '#gateway/tracing/index';
import { CONSOLE_KEY, until, WEBHOOK_SECRET } from '../async/harness.ts';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { API_KEY, apiKey, PROJECT_ID, project, provider, secret, workflow } from '../harness/manifests.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import { startReceiver } from '../webhooks/receiver.ts';
import { type Collector, type ExportedSpan, startCollector } from './collector.ts';

// biome-ignore lint/suspicious/noExplicitAny: test-side JSON
type Json = any;

const STREAM_MODEL = 'gpt-4o-mini-chunks-6-interval-60';
const EVENTS = ['ai.response', 'task.ai_generated', 'task.completed'];

let collector: Collector;
let sim: Simulator;
let tracing: Tracing;
let gw: RunningGateway;
let receiver: Awaited<ReturnType<typeof startReceiver>>;

beforeAll(async () => {
  collector = await startCollector();
  sim = await startSimulator();
  receiver = await startReceiver(WEBHOOK_SECRET);
  tracing = await startTracing(
    {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
      OTEL_SERVICE_NAME: 'switchyard-under-test',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=ci,k8s.pod.name=gw-0',
      OTEL_BSP_SCHEDULE_DELAY: '50',
    },
    pino({ level: 'silent' }),
  );
  expect(tracing.enabled).toBe(true);
  gw = await startGateway(
    [
      project('app', {
        webhooks: [{ url: receiver.url, secretRef: { name: 'hook-secret', key: 's0' }, events: EVENTS }],
        outboundFetch: { allowPrivateNetworks: true },
      }),
      secret('hook-secret', { s0: WEBHOOK_SECRET }),
      ...apiKey('main', API_KEY),
      ...apiKey('admin', CONSOLE_KEY, { scopes: ['ai', 'console'] }),
      ...provider('oai', 'openai', sim.url, ['gpt-4o-mini', 'fail-503', STREAM_MODEL]),
      ...provider('claude', 'anthropic', sim.url, ['claude-haiku-4-5']),
      workflow('fo', {
        provider: 'oai',
        model: 'fail-503',
        backups: [{ provider: 'claude', model: 'claude-haiku-4-5' }],
      }),
      workflow('down', { provider: 'oai', model: 'fail-503' }),
      workflow('streamer', { provider: 'oai', model: STREAM_MODEL }),
      workflow('later', { provider: 'oai', model: 'gpt-4o-mini' }),
      workflow('moderation', { provider: 'oai', model: 'gpt-4o-mini', eventName: 'content.moderate' }),
      workflow('memo', {
        provider: 'oai',
        model: 'gpt-4o-mini',
        sessionMemory: { enabled: true, summarizeAtTokens: 200 },
      }),
    ],
    { tracing },
  );
});

afterAll(async () => {
  await gw?.close(); // closes `tracing` too
  await receiver?.close();
  await sim?.close();
  await collector?.close();
});

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const MS = 1_000_000n;

/** A client's W3C context: a new trace, its own span as the parent of ours. */
function clientContext() {
  const traceId = hex(16);
  const spanId = hex(8);
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01`, tracestate: 'client=7,acme=x' };
}

async function post(path: string, body: unknown, headers: Record<string, string> = {}, key = API_KEY) {
  const res = await fetch(`${gw.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Json };
}

/** The trace's spans once `count` of them arrived (tracing flushed first). */
async function traceOf(traceId: string, count: number): Promise<ExportedSpan[]> {
  await tracing.flush();
  return collector.waitFor((all) => {
    const spans = all.filter((s) => s.traceId === traceId);
    return spans.length >= count ? spans : undefined;
  });
}

const one = (spans: ExportedSpan[], pick: (s: ExportedSpan) => boolean, what: string): ExportedSpan => {
  const found = spans.filter(pick);
  expect(found, what).toHaveLength(1);
  return found[0]!;
};
const childrenOf = (spans: ExportedSpan[], parent: ExportedSpan) =>
  spans.filter((s) => s.parentSpanId === parent.spanId).sort((a, b) => Number(a.startNs - b.startNs));

async function logEntry(id: string): Promise<Json> {
  await gw.gateway.state.flush();
  const logs = await gw.gateway.state.queryLogs(PROJECT_ID, { limit: 200 });
  return logs.entries.find((e) => e.request_log_id === id);
}

const simPort = () => Number(new URL(sim.url).port);

describe('a sync request with a failover', () => {
  it('server span → two client spans (503, then the backup), traceparent to each provider call', async () => {
    sim.clearRequests();
    const client = clientContext();
    const r = await post(
      '/v1/ai',
      {
        workflow: 'fo',
        format: 'wrapped',
        temperature: 0.2,
        max_tokens: 64,
        messages: [{ role: 'user', content: 'trace me' }],
      },
      { traceparent: client.traceparent, tracestate: client.tracestate },
    );
    expect(r.status).toBe(200);
    const meta = r.body.meta;
    expect(meta.used_provider).toBe('claude');
    const spans = await traceOf(client.traceId, 3);
    expect(spans).toHaveLength(3);

    const server = one(spans, (s) => s.parentSpanId === client.spanId, 'the server span');
    expect(server.name).toBe('POST /v1/ai');
    expect(server.kind).toBe('server');
    expect(server.status.code).toBe('unset');
    expect(server.scope).toBe('switchyard-gateway');
    expect(server.resource).toMatchObject({
      'service.name': 'switchyard-under-test',
      'deployment.environment.name': 'ci',
      'k8s.pod.name': 'gw-0',
      'telemetry.sdk.language': 'nodejs',
    });
    expect(server.attributes).toEqual({
      'http.request.method': 'POST',
      'http.route': '/v1/ai',
      'url.path': '/v1/ai',
      'url.scheme': 'http',
      'network.protocol.version': '1.1',
      'client.address': '127.0.0.1',
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(gw.url).port),
      'user_agent.original': expect.any(String),
      'http.response.status_code': 200,
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'fail-503',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.response.model': 'claude-haiku-4-5',
      'gen_ai.usage.input_tokens': meta.usage.prompt_tokens,
      'gen_ai.usage.output_tokens': meta.usage.completion_tokens,
      'switchyard.project': PROJECT_ID,
      'switchyard.workflow': 'fo',
      'switchyard.provider': 'claude',
      'switchyard.slot': 'backup-1',
      'switchyard.api_key_id': 'team/main',
      'switchyard.outcome': 'success',
      'switchyard.request_log_id': meta.request_log_id,
    });

    const [failed, answered] = childrenOf(spans, server);
    expect(failed!.name).toBe('chat fail-503');
    expect(failed!.kind).toBe('client');
    expect(failed!.status.code).toBe('error');
    expect(failed!.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'fail-503',
      'gen_ai.request.max_tokens': 64,
      'gen_ai.request.temperature': 0.2,
      'server.address': '127.0.0.1',
      'server.port': simPort(),
      'switchyard.provider': 'oai',
      'switchyard.slot': 'primary',
      'switchyard.project': PROJECT_ID,
      'switchyard.workflow': 'fo',
      'error.type': '503',
      'http.response.status_code': 503,
      'switchyard.error_code': 'UPSTREAM_STATUS',
    });
    expect(answered!.name).toBe('chat claude-haiku-4-5');
    expect(answered!.kind).toBe('client');
    expect(answered!.status.code).toBe('unset');
    expect(answered!.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.request.model': 'claude-haiku-4-5',
      'gen_ai.request.max_tokens': 64,
      'gen_ai.request.temperature': 0.2,
      'server.address': '127.0.0.1',
      'server.port': simPort(),
      'switchyard.provider': 'claude',
      'switchyard.slot': 'backup-1',
      'switchyard.project': PROJECT_ID,
      'switchyard.workflow': 'fo',
      'gen_ai.response.model': 'claude-haiku-4-5',
      'gen_ai.response.id': expect.any(String),
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.input_tokens': meta.usage.prompt_tokens,
      'gen_ai.usage.output_tokens': meta.usage.completion_tokens,
      // Claude reports its prompt cache on every answer, 0 when nothing was cached.
      'gen_ai.usage.cache_read.input_tokens': 0,
      'gen_ai.usage.cache_creation.input_tokens': 0,
    });
    // One after the other, both inside the request (within the millisecond: the SDK anchors each
    // span's start on the wall clock, Date.now(), and measures its duration from there).
    expect(failed!.endNs <= answered!.startNs + MS).toBe(true);
    expect(server.startNs <= failed!.startNs + MS && answered!.endNs <= server.endNs + MS).toBe(true);

    // Each provider call carried its own attempt span as the parent, and the client's tracestate.
    const calls = sim.requests();
    expect(calls.map((c) => c.headers.traceparent)).toEqual([
      `00-${client.traceId}-${failed!.spanId}-01`,
      `00-${client.traceId}-${answered!.spanId}-01`,
    ]);
    expect(calls.map((c) => c.headers.tracestate)).toEqual([client.tracestate, client.tracestate]);

    // The request-log entry names the trace.
    expect((await logEntry(meta.request_log_id)).trace_id).toBe(client.traceId);
  });

  it('a chain that fails everywhere: the server span is an error with error.type', async () => {
    const client = clientContext();
    const r = await post(
      '/v1/ai',
      { workflow: 'down', format: 'wrapped', messages: [{ role: 'user', content: 'x' }] },
      { traceparent: client.traceparent },
    );
    expect(r.body.meta.status).toBe('error');
    const spans = await traceOf(client.traceId, 2);
    const server = one(spans, (s) => s.kind === 'server', 'the server span');
    expect(server.status.code).toBe('error');
    expect(server.attributes).toMatchObject({
      'http.response.status_code': r.status,
      'error.type': 'UPSTREAM_STATUS',
      'switchyard.outcome': 'upstream_error',
      'switchyard.error_code': 'UPSTREAM_STATUS',
      'gen_ai.provider.name': 'openai',
    });
    const [attempt] = childrenOf(spans, server);
    expect(attempt!.attributes).toMatchObject({ 'error.type': '503', 'switchyard.slot': 'primary' });
  });
});

describe('a stream', () => {
  it('the client span ends when the stream ends, with the usage the stream reported', async () => {
    sim.clearRequests();
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'streamer',
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: 'user', content: 'stream me please' }],
      }),
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    let firstChunkNs: bigint | undefined;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      firstChunkNs ??= BigInt(Date.now()) * 1_000_000n;
      text += decoder.decode(value, { stream: true });
    }
    const chunks = text
      .split('\n\n')
      .map((e) => e.replace(/^data: /, '').trim())
      .filter((d) => d && d !== '[DONE]')
      .map((d) => JSON.parse(d) as Json);
    const usage = chunks.find((c) => c.usage)?.usage;
    expect(usage?.completion_tokens).toBeGreaterThan(0);

    const traceparent = sim.requests()[0]!.headers.traceparent!;
    const traceId = traceparent.split('-')[1]!;
    const spans = await traceOf(traceId, 2);
    const server = one(spans, (s) => s.kind === 'server', 'the server span');
    expect(server.parentSpanId).toBe(''); // no traceparent from the client: a new trace
    expect(server.name).toBe('POST /v1/chat/completions');
    const attempt = one(spans, (s) => s.kind === 'client', 'the client span');
    expect(attempt.parentSpanId).toBe(server.spanId);
    expect(traceparent).toBe(`00-${traceId}-${attempt.spanId}-01`);
    expect(attempt.name).toBe(`chat ${STREAM_MODEL}`);
    expect(attempt.attributes).toEqual({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': STREAM_MODEL,
      'gen_ai.request.stream': true,
      'server.address': '127.0.0.1',
      'server.port': simPort(),
      'switchyard.provider': 'oai',
      'switchyard.slot': 'primary',
      'switchyard.project': PROJECT_ID,
      'switchyard.workflow': 'streamer',
      'gen_ai.response.model': STREAM_MODEL,
      'gen_ai.response.id': expect.any(String),
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.input_tokens': usage.prompt_tokens,
      'gen_ai.usage.output_tokens': usage.completion_tokens,
      'gen_ai.usage.cache_read.input_tokens': 0,
      'gen_ai.response.time_to_first_chunk': expect.any(Number),
    });
    // Six chunks 60 ms apart: the span covers the whole stream, not just its first event.
    const durationMs = Number(attempt.endNs - attempt.startNs) / 1e6;
    const ttfcMs = (attempt.attributes['gen_ai.response.time_to_first_chunk'] as number) * 1000;
    console.log(
      `stream attempt span: ${durationMs.toFixed(1)} ms, first chunk after ${ttfcMs.toFixed(1)} ms`,
    );
    expect(durationMs).toBeGreaterThanOrEqual(250);
    expect(ttfcMs).toBeGreaterThan(0);
    expect(ttfcMs).toBeLessThan(durationMs - 200);
    expect(attempt.endNs > firstChunkNs! + 100n * MS).toBe(true);
    expect(server.endNs + MS >= attempt.endNs).toBe(true);
    expect(server.attributes).toMatchObject({
      'http.route': '/v1/chat/completions',
      'gen_ai.request.stream': true,
      'gen_ai.usage.input_tokens': usage.prompt_tokens,
      'gen_ai.usage.output_tokens': usage.completion_tokens,
      'switchyard.outcome': 'success',
    });
  });
});

describe('an async request with its webhook', () => {
  it('the job, its provider call and the webhook attempt are in the trace of the accepting request', async () => {
    sim.clearRequests();
    const client = clientContext();
    const ack = await post(
      '/v1/ai/async',
      { workflow: 'later', messages: [{ role: 'user', content: 'later please' }] },
      { traceparent: client.traceparent },
    );
    expect(ack.status).toBe(202);
    const channel = ack.body.channel_id as string;
    const hook = await until(async () =>
      receiver.of('ai.response').find((d) => d.json.channel_id === channel),
    );
    const spans = await traceOf(client.traceId, 4);
    expect(spans).toHaveLength(4);

    const accept = one(spans, (s) => s.parentSpanId === client.spanId, 'the accepting server span');
    expect(accept.name).toBe('POST /v1/ai/async');
    expect(accept.kind).toBe('server');
    expect(accept.attributes).toMatchObject({
      'http.response.status_code': 202,
      'http.route': '/v1/ai/async',
      'switchyard.channel_id': channel,
      'switchyard.workflow': 'later',
    });

    const job = one(spans, (s) => s.name === 'switchyard.async.job', 'the job span');
    expect(job.kind).toBe('consumer');
    expect(job.parentSpanId).toBe(accept.spanId);
    expect(job.status.code).toBe('unset');
    expect(job.attributes).toMatchObject({
      'switchyard.channel_id': channel,
      'switchyard.project': PROJECT_ID,
      'switchyard.workflow': 'later',
      'switchyard.outcome': 'success',
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.response.model': 'gpt-4o-mini',
      'gen_ai.usage.input_tokens': expect.any(Number),
    });

    const [call, delivery] = childrenOf(spans, job);
    expect(call!.name).toBe('chat gpt-4o-mini');
    expect(call!.kind).toBe('client');
    expect(sim.requests()[0]!.headers.traceparent).toBe(`00-${client.traceId}-${call!.spanId}-01`);

    expect(delivery!.name).toBe('webhook ai.response');
    expect(delivery!.kind).toBe('client');
    expect(delivery!.status.code).toBe('unset');
    expect(delivery!.attributes).toEqual({
      'http.request.method': 'POST',
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(receiver.url).port),
      'http.response.status_code': 200,
      'switchyard.project': PROJECT_ID,
      'switchyard.webhook.id': hook.id,
      'switchyard.webhook.event': 'ai.response',
      'switchyard.webhook.attempt': 1,
      'switchyard.webhook.replay': 0,
      'switchyard.webhook.outcome': 'delivered',
    });
    // The receiver got the attempt's context, to continue the trace on its side.
    expect(hook.headers.traceparent).toBe(`00-${client.traceId}-${delivery!.spanId}-01`);

    // Every request-log entry of the channel names the trace: the acceptance, the job, the webhook attempt.
    const entries = await until(async () => {
      await gw.gateway.state.flush();
      const logs = await gw.gateway.state.queryLogs(PROJECT_ID, { channel_id: channel, limit: 10 });
      return logs.entries.length >= 3 ? logs.entries : undefined;
    });
    expect(entries.map((e) => [e.type, e.trace_id]).sort()).toEqual(
      [
        ['request', client.traceId],
        ['request', client.traceId],
        ['webhook_attempt', client.traceId],
      ].sort(),
    );
  });

  it('a pipeline callback continues the accepted trace, linked to its own request', async () => {
    const client = clientContext();
    const ack = await post(
      '/v1/ai/async',
      { workflow: 'moderation', messages: [{ role: 'user', content: 'moderate this' }] },
      { traceparent: client.traceparent },
    );
    expect(ack.status).toBe(202);
    const channel = ack.body.channel_id as string;
    const generated = await until(async () =>
      receiver.of('task.ai_generated').find((d) => d.json.channel_id === channel),
    );
    const backend = clientContext();
    const cb = await post(
      `/v1/callback/${channel}`,
      { data: { approved: true }, task_id: 't-1' },
      { traceparent: backend.traceparent },
    );
    expect(cb.status).toBe(200);
    const completed = await until(async () =>
      receiver.of('task.completed').find((d) => d.json.channel_id === channel),
    );
    // accept, job, provider call, task.ai_generated, callback step, task.completed
    const spans = await traceOf(client.traceId, 6);
    expect(spans).toHaveLength(6);
    const accept = one(spans, (s) => s.parentSpanId === client.spanId, 'the accepting server span');
    const job = one(spans, (s) => s.name === 'switchyard.async.job', 'the job span');
    expect(job.parentSpanId).toBe(accept.spanId);
    const aiGenerated = one(spans, (s) => s.name === 'webhook task.ai_generated', 'task.ai_generated');
    expect(aiGenerated.parentSpanId).toBe(job.spanId);
    expect(generated.headers.traceparent).toBe(`00-${client.traceId}-${aiGenerated.spanId}-01`);

    // The callback request is a server span in the backend's trace ...
    const backendSpans = await traceOf(backend.traceId, 1);
    const cbServer = one(backendSpans, (s) => s.parentSpanId === backend.spanId, 'the callback server span');
    expect(cbServer.name).toBe('POST /v1/callback/:channel_id');
    expect(cbServer.attributes).toMatchObject({
      'http.response.status_code': 200,
      'switchyard.channel_id': channel,
    });
    // ... and its work a span in the accepted request's trace, linked to it.
    const step = one(spans, (s) => s.name === 'switchyard.async.callback', 'the callback span');
    expect(step.parentSpanId).toBe(accept.spanId);
    expect(step.kind).toBe('internal');
    expect(step.links).toEqual([{ traceId: backend.traceId, spanId: cbServer.spanId }]);
    expect(step.attributes).toEqual({ 'switchyard.project': PROJECT_ID, 'switchyard.channel_id': channel });
    const done = one(spans, (s) => s.name === 'webhook task.completed', 'task.completed');
    expect(done.parentSpanId).toBe(step.spanId);
    expect(completed.headers.traceparent).toBe(`00-${client.traceId}-${done.spanId}-01`);
  });
});

describe('a session summary', () => {
  it('is a span under the request whose turn crossed the threshold, with its own provider call', async () => {
    let session: string | undefined;
    const turns = new Map<string, ReturnType<typeof clientContext>>();
    let summary: Json;
    for (let i = 1; i <= 12 && !summary; i++) {
      const client = clientContext();
      turns.set(client.traceId, client);
      const r = await post(
        '/v1/ai',
        {
          workflow: 'memo',
          format: 'wrapped',
          ...(session ? { session_id: session } : {}),
          messages: [
            {
              role: 'user',
              content: `Turn ${i}: item ${i} costs ${i * 7} dollars and ships from warehouse ${i}.`,
            },
          ],
        },
        { traceparent: client.traceparent },
      );
      expect(r.status).toBe(200);
      session ??= r.body.meta.session_id as string;
      await gw.gateway.sessionWorkDone();
      await gw.gateway.state.flush();
      const logs = await gw.gateway.state.queryLogs(PROJECT_ID, {
        session_id: session,
        type: 'session_summary',
        limit: 5,
      });
      summary = logs.entries[0];
    }
    expect(summary, 'a summary ran').toBeDefined();
    const client = turns.get(summary.trace_id)!;
    expect(client, 'the summary is in the trace of one of the turns').toBeDefined();
    const spans = await traceOf(client.traceId, 4);
    const server = one(spans, (s) => s.parentSpanId === client.spanId, 'the turn server span');
    const span = one(spans, (s) => s.name === 'switchyard.session.summary', 'the summary span');
    expect(span.kind).toBe('internal');
    expect(span.parentSpanId).toBe(server.spanId);
    expect(span.attributes).toMatchObject({
      'switchyard.request_log_id': summary.request_log_id,
      'switchyard.workflow': 'memo',
      'gen_ai.conversation.id': session,
      'gen_ai.operation.name': 'chat',
      'gen_ai.response.model': 'gpt-4o-mini',
      'switchyard.outcome': 'success',
    });
    const [call] = childrenOf(spans, span);
    expect(call!.name).toBe('chat gpt-4o-mini');
    expect(call!.attributes['gen_ai.usage.output_tokens']).toBe(summary.usage.completion_tokens);
  });
});

/**
 * A webhook attempt traced by a tracer of its own (no emitter's context: a trace of its own),
 * exported with `env`, and its span as the collector received it.
 */
async function exportedWebhook(
  env: NodeJS.ProcessEnv,
  hookInput: { projectId: string; url: string; attempt: number },
  end: (hook: ReturnType<Tracing['webhook']>) => void,
) {
  const tracer = await startTracing(env, pino({ level: 'silent' }));
  const hook = tracer.webhook({ id: 'msg_probe', event: 'ai.response', replay: 0, ...hookInput });
  end(hook);
  await tracer.close();
  const span = await collector.waitFor((all) =>
    all.find((s) => s.attributes['switchyard.project'] === hookInput.projectId),
  );
  return { hook, span };
}

describe('export settings', () => {
  it("OTEL_EXPORTER_OTLP_PROTOCOL=grpc reaches the collector's gRPC receiver, at the endpoint as given", async () => {
    const { hook, span } = await exportedWebhook(
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.grpcEndpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
        OTEL_SERVICE_NAME: 'grpc-probe',
      },
      { projectId: 'team.grpc', url: 'https://hooks.example/in', attempt: 1 },
      (h) => h.end('delivered', 200),
    );
    expect(span.resource['service.name']).toBe('grpc-probe');
    expect(span.traceId).toBe(hook.traceId);
    expect(span.name).toBe('webhook ai.response');
    expect(span.attributes['switchyard.webhook.outcome']).toBe('delivered');
  });

  it('OTEL_EXPORTER_OTLP_PROTOCOL=http/json reaches the collector too', async () => {
    // A webhook attempt to a receiver that answered 503.
    const { hook, span } = await exportedWebhook(
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'json-probe',
      },
      { projectId: 'team.probe', url: 'https://hooks.example:8443/in?token=secret', attempt: 2 },
      (h) => h.end('retry', 503, { type: '503', message: 'HTTP 503' }),
    );
    expect(span.resource['service.name']).toBe('json-probe');
    expect(span.name).toBe('webhook ai.response');
    expect(span.kind).toBe('client');
    expect(span.parentSpanId).toBe('');
    expect(span.traceId).toBe(hook.traceId);
    expect(span.status).toEqual({ code: 'error', message: 'HTTP 503' });
    // The receiver's address only: its path and query may hold a token.
    expect(span.attributes).toEqual({
      'http.request.method': 'POST',
      'server.address': 'hooks.example',
      'server.port': 8443,
      'switchyard.project': 'team.probe',
      'switchyard.webhook.id': 'msg_probe',
      'switchyard.webhook.event': 'ai.response',
      'switchyard.webhook.attempt': 2,
      'switchyard.webhook.replay': 0,
      'http.response.status_code': 503,
      'switchyard.webhook.outcome': 'retry',
      'error.type': '503',
    });
  });
});

describe('what tracing costs', () => {
  const NODE = join(process.cwd(), 'node_modules/.bin/node');
  const child = (mode: string) => {
    const r = spawnSync(
      NODE,
      [
        '--expose-gc',
        '--disable-warning=ExperimentalWarning',
        'test/tracing/fixtures/gateway-child.ts',
        mode,
        '300',
      ],
      { encoding: 'utf8', timeout: 120_000 },
    );
    expect(r.status, r.stderr).toBe(0);
    return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Json;
  };

  it('on: the SDK and one exporter loaded, every provider call traced; off: none of it', () => {
    const on = child(collector.endpoint);
    const off = child('off');
    const packages = (m: Json) => [...new Set((m.modules as string[]).map((l) => l.split(' <- ')[0]))].sort();
    console.log(
      `heap after start: off ${off.afterStart.heapKiB} KiB, on ${on.afterStart.heapKiB} KiB (+${on.afterStart.heapKiB - off.afterStart.heapKiB}); ` +
        `after ${on.requests} requests: off ${off.afterRequests.heapKiB} KiB, on ${on.afterRequests.heapKiB} KiB (+${on.afterRequests.heapKiB - off.afterRequests.heapKiB}); ` +
        `RSS after requests: off ${off.afterRequests.rssKiB} KiB, on ${on.afterRequests.rssKiB} KiB`,
    );
    console.log(`packages loaded on: ${packages(on).join(', ')}; off: ${packages(off).join(', ')}`);
    expect(packages(on)).toEqual(
      expect.arrayContaining([
        '@opentelemetry/api',
        '@opentelemetry/core',
        '@opentelemetry/exporter-trace-otlp-proto',
        '@opentelemetry/resources',
        '@opentelemetry/sdk-trace',
      ]),
    );
    expect(packages(on)).not.toContain('@opentelemetry/exporter-trace-otlp-http');
    expect(packages(on)).not.toContain('@opentelemetry/exporter-trace-otlp-grpc');
    expect(on.providerTraceparents).toBe(on.providerRequests);
    expect(
      on.logTraceIds.every((t: string | null) => typeof t === 'string' && /^[0-9a-f]{32}$/.test(t)),
    ).toBe(true);
    // Off: only the API package prom-client imports for itself (see off.test.ts).
    expect(packages(off)).toEqual(['@opentelemetry/api']);
  });
});
