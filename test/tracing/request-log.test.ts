/**
 * `trace_id` in the request log, on Redis and through GET /v1/request-logs: entries stored before
 * the field existed read back with `trace_id: null` and every other field as stored; a traced
 * request's entry names its trace.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectRedis } from '#contract';
import { type RunningRedis, startRedis } from '#devkit/redis';
import { LOG_FIELD, STATE_KEYS } from '#gateway/state/keys';
import { startTracing } from '#gateway/tracing/index';
import { CONSOLE_KEY, until } from '../async/harness.ts';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { API_KEY, apiKey, PROJECT_ID, project, workflow } from '../harness/manifests.ts';
import { entry } from '../state/fixtures.ts';
import { type Collector, startCollector } from './collector.ts';

describe('trace_id in the request log (Redis)', () => {
  let redis: RunningRedis;
  let collector: Collector;
  let gw: RunningGateway;

  beforeAll(async () => {
    redis = await startRedis();
    collector = await startCollector();
    const tracing = await startTracing(
      { OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint },
      pino({ level: 'silent' }),
    );
    gw = await startGateway(
      [
        project(),
        ...apiKey('main', API_KEY),
        ...apiKey('admin', CONSOLE_KEY, { scopes: ['ai', 'console'] }),
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'tm-cred', namespace: 'team' },
          stringData: { apiKey: 'sk-unused' },
        },
        {
          apiVersion: 'switchyard.dev/v1alpha1',
          kind: 'Provider',
          metadata: { name: 'tm', namespace: 'team' },
          spec: {
            type: 'openai',
            credentials: { secretRef: { name: 'tm-cred', key: 'apiKey' } },
            models: [{ name: 'gpt-4o-mini', requestTypes: ['chat'] }],
          },
        },
        workflow('summary', { requestType: 'chat', provider: 'tm', model: 'gpt-4o-mini', testMode: true }),
      ],
      { redisUrl: redis.url, tracing },
    );
  });
  afterAll(async () => {
    await gw?.close();
    await collector?.close();
    await redis?.stop();
  });

  const logs = async () => {
    await gw.gateway.state.flush();
    const res = await fetch(`${gw.url}/v1/request-logs?limit=50`, {
      headers: { authorization: `Bearer ${CONSOLE_KEY}` },
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { data: Record<string, unknown>[] }).data;
  };

  it('an entry stored without trace_id answers trace_id: null, the rest unchanged', async () => {
    const old: Record<string, unknown> = { ...entry(PROJECT_ID, 1), time: new Date().toISOString() };
    delete old.trace_id;
    const client = connectRedis({ url: redis.url });
    await client.xadd(STATE_KEYS.logs(PROJECT_ID), '*', LOG_FIELD, JSON.stringify(old));
    client.disconnect();
    const got = (await logs()).find((e) => e.request_log_id === old.request_log_id);
    expect(got).toStrictEqual({ ...old, trace_id: null });
  });

  it('a traced request is stored and answered with its trace id', async () => {
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const res = await fetch(`${gw.url}/v1/ai`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${API_KEY}`,
        'content-type': 'application/json',
        traceparent: `00-${traceId}-b7ad6b7169203331-01`,
      },
      body: JSON.stringify({
        workflow: 'summary',
        format: 'wrapped',
        messages: [{ role: 'user', content: 'hi' }],
      }),
    });
    const id = ((await res.json()) as { meta: { request_log_id: string } }).meta.request_log_id;
    // Settled once the response has gone out: poll until the entry is there.
    const got = await until(async () => (await logs()).find((e) => e.request_log_id === id));
    expect(got.trace_id).toBe(traceId);
  });
});
