/**
 * Tracing off (no OTLP endpoint, the default): no OpenTelemetry SDK module is loaded, nothing is
 * propagated to providers or webhook receivers, request-log entries carry `trace_id: null`; and the
 * environment variables that decide it.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError } from '#gateway/config/env';
import { readTracingConfig } from '#gateway/tracing/config';
import { startTracing, TRACING_OFF } from '#gateway/tracing/index';
import { until, WEBHOOK_SECRET } from '../async/harness.ts';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { API_KEY, apiKey, PROJECT_ID, project, provider, secret, workflow } from '../harness/manifests.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import { startReceiver } from '../webhooks/receiver.ts';

// biome-ignore lint/suspicious/noExplicitAny: test-side JSON
type Json = any;

const NODE = join(process.cwd(), 'node_modules/.bin/node');
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

describe('tracing off', () => {
  it('a gateway serving sync and streamed requests loads no OpenTelemetry SDK module and passes nothing on', () => {
    const r = spawnSync(
      NODE,
      [
        '--expose-gc',
        '--disable-warning=ExperimentalWarning',
        'test/tracing/fixtures/gateway-child.ts',
        'off',
        '200',
      ],
      { encoding: 'utf8', timeout: 120_000 },
    );
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Json;
    console.log(
      `tracing off: heap ${out.afterRequests.heapKiB} KiB, RSS ${out.afterRequests.rssKiB} KiB after ${out.requests} requests; @opentelemetry resolutions: ${out.modules.join('; ')}`,
    );
    // prom-client (the metrics library) imports @opentelemetry/api for its exemplars, tracing or
    // not; nothing else of OpenTelemetry is resolved, by anyone.
    for (const line of out.modules as string[]) {
      const [pkg, from] = line.split(' <- ');
      expect(pkg, line).toBe('@opentelemetry/api');
      expect(['prom-client', '@opentelemetry/api'], line).toContain(from);
    }
    expect(out.providerRequests).toBe(out.requests);
    expect(out.providerTraceparents).toBe(0);
    expect(out.providerTracestates).toBe(0);
    expect(out.logTraceIds).toHaveLength(20);
    expect(out.logTraceIds.every((t: unknown) => t === null)).toBe(true);
  });

  describe('an async request with a webhook', () => {
    let sim: Simulator;
    let gw: RunningGateway;
    let receiver: Awaited<ReturnType<typeof startReceiver>>;
    beforeAll(async () => {
      sim = await startSimulator();
      receiver = await startReceiver(WEBHOOK_SECRET);
      gw = await startGateway([
        project('app', {
          webhooks: [
            { url: receiver.url, secretRef: { name: 'hook-secret', key: 's0' }, events: ['ai.response'] },
          ],
          outboundFetch: { allowPrivateNetworks: true },
        }),
        secret('hook-secret', { s0: WEBHOOK_SECRET }),
        ...apiKey('main', API_KEY),
        ...provider('oai', 'openai', sim.url, ['gpt-4o-mini']),
        workflow('later', { provider: 'oai', model: 'gpt-4o-mini' }),
      ]);
    });
    afterAll(async () => {
      await gw?.close();
      await receiver?.close();
      await sim?.close();
    });

    it('the job, the provider call and the delivery carry no trace context; entries say trace_id null', async () => {
      const res = await fetch(`${gw.url}/v1/ai/async`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${API_KEY}`,
          'content-type': 'application/json',
          traceparent: TRACEPARENT,
        },
        body: JSON.stringify({ workflow: 'later', messages: [{ role: 'user', content: 'later' }] }),
      });
      expect(res.status).toBe(202);
      const channel = ((await res.json()) as Json).channel_id as string;
      const hook = await until(async () =>
        receiver.of('ai.response').find((d) => d.json.channel_id === channel),
      );
      expect(hook.verified).toBe(true);
      expect(hook.headers.traceparent).toBeUndefined();
      expect(hook.headers.tracestate).toBeUndefined();
      expect(sim.requests()).toHaveLength(1);
      expect(sim.requests()[0]!.headers.traceparent).toBeUndefined();
      // The attempt's entry is written once the receiver's answer is in: wait for all three.
      const entries = await until(async () => {
        await gw.gateway.state.flush();
        const logs = await gw.gateway.state.queryLogs(PROJECT_ID, { channel_id: channel, limit: 10 });
        return logs.entries.length >= 3 ? logs.entries : undefined;
      });
      expect(entries.map((e) => e.type).sort()).toEqual(['request', 'request', 'webhook_attempt']);
      expect(entries.map((e) => e.trace_id)).toEqual([null, null, null]);
    });
  });
});

describe('the tracing environment', () => {
  const logger = pino({ level: 'silent' });
  const endpoint = 'http://otel-collector.observability:4318';

  it('is off without an endpoint, with OTEL_SDK_DISABLED=true and with OTEL_TRACES_EXPORTER=none', async () => {
    expect(await startTracing({}, logger)).toBe(TRACING_OFF);
    expect(await startTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: '' }, logger)).toBe(TRACING_OFF);
    expect(
      readTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SDK_DISABLED: 'true' }),
    ).toBeUndefined();
    expect(
      readTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_EXPORTER: 'none' }),
    ).toBeUndefined();
    // Other signals' settings do not turn traces on.
    expect(
      readTracingConfig({ OTEL_SERVICE_NAME: 'gw', OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' }),
    ).toBeUndefined();
  });

  it('reads the endpoint, protocol, service name, sampler and batch settings', () => {
    expect(readTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint })).toEqual({
      url: `${endpoint}/v1/traces`,
      protocol: 'http/protobuf',
      serviceName: undefined,
      resourceAttributes: undefined,
      sampler: 'parentbased_always_on',
      ratio: 1,
      batch: {
        scheduledDelayMillis: undefined,
        exportTimeoutMillis: undefined,
        maxQueueSize: undefined,
        maxExportBatchSize: undefined,
      },
    });
    expect(
      readTracingConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: `${endpoint}/`,
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example/otlp/traces',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
        OTEL_SERVICE_NAME: 'gw-eu',
        OTEL_RESOURCE_ATTRIBUTES: 'k8s.pod.name=gw-0',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.25',
        OTEL_BSP_SCHEDULE_DELAY: '2000',
        OTEL_BSP_MAX_QUEUE_SIZE: '4096',
      }),
    ).toMatchObject({
      url: 'https://traces.example/otlp/traces',
      protocol: 'http/json',
      serviceName: 'gw-eu',
      resourceAttributes: 'k8s.pod.name=gw-0',
      sampler: 'parentbased_traceidratio',
      ratio: 0.25,
      batch: { scheduledDelayMillis: 2000, maxQueueSize: 4096 },
    });
    // gRPC takes the endpoint as it is: the service name is the path, not /v1/traces.
    expect(
      readTracingConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://otel-collector:4317',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      }),
    ).toMatchObject({ url: 'http://otel-collector:4317', protocol: 'grpc' });
    expect(
      readTracingConfig({
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://traces.example:4317',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc',
      }),
    ).toMatchObject({ url: 'https://traces.example:4317', protocol: 'grpc' });
    // The traces endpoint alone turns tracing on too.
    expect(readTracingConfig({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${endpoint}/v1/traces` })?.url).toBe(
      `${endpoint}/v1/traces`,
    );
  });

  it('refuses what it cannot do with a clear message', () => {
    const refused = (env: NodeJS.ProcessEnv, message: RegExp) => {
      expect(() => readTracingConfig(env)).toThrow(ConfigError);
      expect(() => readTracingConfig(env)).toThrow(message);
    };
    refused({ OTEL_EXPORTER_OTLP_ENDPOINT: 'otel-collector:4318' }, /OTEL_EXPORTER_OTLP_ENDPOINT/);
    refused({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_EXPORTER: 'zipkin' }, /only "otlp"/);
    refused(
      { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_SAMPLER_ARG: '2' },
      /OTEL_TRACES_SAMPLER_ARG/,
    );
    refused(
      { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_TRACES_SAMPLER: 'sometimes' },
      /OTEL_TRACES_SAMPLER/,
    );
    refused(
      { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: 'soon' },
      /OTEL_BSP_SCHEDULE_DELAY/,
    );
  });
});
