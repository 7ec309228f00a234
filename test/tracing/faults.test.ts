/**
 * Trace context is state: it travels with each async job through Redis. Two real gateway processes
 * on one Redis export to a real collector; jobs are accepted on both, one is SIGKILLed while it runs
 * some of them, and the jobs it held run again on the survivor. Every job must still end in the
 * trace of the request that was accepted: counted on the webhook receiver (the `traceparent` each
 * delivery carries) and in the collector. The test prints its counts.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fleet, startFleet } from '#devkit/fleet';
import { asyncConfig, until, WEBHOOK_SECRET } from '../async/harness.ts';
import { API_KEY } from '../harness/manifests.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import { startReceiver } from '../webhooks/receiver.ts';
import { type Collector, startCollector } from './collector.ts';

describe('trace context across a killed gateway (fleet of 2, one Redis)', () => {
  let collector: Collector;
  let sim: Simulator;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let fleet: Fleet;

  beforeAll(async () => {
    collector = await startCollector();
    sim = await startSimulator();
    receiver = await startReceiver(WEBHOOK_SECRET);
    fleet = await startFleet({
      manifests: [
        ...asyncConfig({
          webhooks: [{ url: receiver.url, events: ['ai.response', 'ai.error'] }],
          allowPrivate: true,
        }),
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'sim-cred', namespace: 'team' },
          stringData: { apiKey: 'sk-sim' },
        },
        {
          apiVersion: 'switchyard.dev/v1alpha1',
          kind: 'Provider',
          metadata: { name: 'sim', namespace: 'team' },
          spec: {
            type: 'openai',
            baseURL: `${sim.url}/v1`,
            credentials: { secretRef: { name: 'sim-cred', key: 'apiKey' } },
            timeouts: { connectMs: 1000, firstByteMs: 5000, totalMs: 10000 },
            models: [{ name: 'slow-2500', requestTypes: ['chat'] }],
          },
        },
        {
          apiVersion: 'switchyard.dev/v1alpha1',
          kind: 'Workflow',
          metadata: { name: 'slow', namespace: 'team' },
          spec: { projectRef: { name: 'app' }, requestType: 'chat', provider: 'sim', model: 'slow-2500' },
        },
      ],
      gateways: 2,
      redis: 'single',
      env: {
        LOG_LEVEL: 'warn',
        SWITCHYARD_JOB_LOCK_MS: '2000',
        SWITCHYARD_JOB_CONCURRENCY: '20',
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
        OTEL_BSP_SCHEDULE_DELAY: '100',
        OTEL_SERVICE_NAME: 'switchyard-fleet',
      },
    });
  }, 120_000);
  afterAll(async () => {
    await fleet?.stop();
    await receiver?.close();
    await sim?.close();
    await collector?.close();
  });

  it('jobs held by the killed pod run again elsewhere, still in the accepting trace', async () => {
    const N = 60;
    const [doomed, survivor] = fleet.gateways;
    const traceOf = new Map<string, { traceId: string; spanId: string }>();
    for (let i = 0; i < N; i++) {
      const traceId = randomBytes(16).toString('hex');
      const spanId = randomBytes(8).toString('hex');
      // Half on each pod: a pod runs the jobs it queued at once (and others' once it sees them).
      const to = i % 2 === 0 ? doomed! : survivor!;
      const res = await fetch(`${to.url}/v1/ai/async`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${API_KEY}`,
          'content-type': 'application/json',
          traceparent: `00-${traceId}-${spanId}-01`,
        },
        body: JSON.stringify({ workflow: 'slow', messages: [{ role: 'user', content: `job ${i}` }] }),
      });
      expect(res.status).toBe(202);
      traceOf.set(((await res.json()) as { channel_id: string }).channel_id, { traceId, spanId });
    }
    // Every acceptance exported (the killed pod's too), then the kill, while the pod still holds
    // jobs (2.5 s each at the provider).
    await collector.waitFor((all) => {
      const accepted = all.filter((s) => s.name === 'POST /v1/ai/async');
      return accepted.length >= N ? true : undefined;
    });
    await doomed!.kill('SIGKILL');

    const results = () =>
      [...receiver.of('ai.response'), ...receiver.of('ai.error')].filter((d) =>
        traceOf.has(String(d.json.channel_id)),
      );
    await until(
      async () => (new Set(results().map((d) => d.json.channel_id)).size >= N ? true : undefined),
      60_000,
      200,
    );
    const deliveries = results();
    // Provider calls per trace (each carries its attempt's traceparent): two for a job run again.
    const calls = new Map<string, number>();
    for (const r of sim.requests()) {
      const traceId = String(r.headers.traceparent ?? '').split('-')[1] ?? '';
      calls.set(traceId, (calls.get(traceId) ?? 0) + 1);
    }
    const rerunTraces = [...traceOf.values()].filter((t) => (calls.get(t.traceId) ?? 0) > 1);
    const inTrace = deliveries.filter((d) => {
      const parts = String(d.headers.traceparent ?? '').split('-');
      return parts[1] === traceOf.get(String(d.json.channel_id))!.traceId;
    });

    // What the collector got: the killed pod what it had sent; the survivor, stopped cleanly (it
    // exports what is left when it stops), everything.
    await survivor!.kill('SIGTERM');
    const spans = await collector.spans();
    let withAccept = 0;
    let withJob = 0;
    let rerunWithJob = 0;
    let rerunWithWebhook = 0;
    let withWebhook = 0;
    for (const { traceId, spanId } of traceOf.values()) {
      const t = spans.filter((s) => s.traceId === traceId);
      const accept = t.find((s) => s.parentSpanId === spanId && s.name === 'POST /v1/ai/async');
      if (!accept) continue;
      withAccept++;
      const jobs = t.filter((s) => s.name === 'switchyard.async.job' && s.parentSpanId === accept.spanId);
      if (jobs.length > 0) withJob++;
      if (jobs.length > 0 && rerunTraces.some((r) => r.traceId === traceId)) rerunWithJob++;
      const hooked = t.some(
        (s) => s.name.startsWith('webhook ai.') && jobs.some((j) => j.spanId === s.parentSpanId),
      );
      if (hooked) withWebhook++;
      if (hooked && rerunTraces.some((r) => r.traceId === traceId)) rerunWithWebhook++;
    }
    console.log(
      `tracing/faults: jobs=${N} (half accepted on each pod), gateway 0 SIGKILLed once every acceptance was exported; provider calls=${[...calls.values()].reduce((a, b) => a + b, 0)}, ` +
        `jobs run again after the kill=${rerunTraces.length}; result deliveries=${deliveries.length} ` +
        `(channels ${new Set(deliveries.map((d) => d.json.channel_id)).size}), in the accepting trace=${inTrace.length}; ` +
        `exported traces with the accept span=${withAccept}, with a job span under it=${withJob} ` +
        `(of the jobs run again: ${rerunWithJob}), with a webhook span under a job=${withWebhook} (of the jobs run again: ${rerunWithWebhook})`,
    );
    // Every delivery, a repeat after the kill included, continues the trace of its accepted request.
    expect(inTrace).toHaveLength(deliveries.length);
    expect(withAccept).toBe(N);
    // A job finished on the killed pod may have lost its spans with it (not yet exported); one it
    // held unfinished ran again on the survivor, whose spans all arrived, in the accepted trace.
    // Everything after the kill ran on the survivor: a job run again there has its job span and
    // its webhook's span, in the accepted trace.
    expect(rerunTraces.length).toBeGreaterThan(0);
    expect(rerunWithJob).toBe(rerunTraces.length);
    expect(rerunWithWebhook).toBe(rerunTraces.length);
    expect(withJob).toBeGreaterThanOrEqual(N - 20);
    expect(withWebhook).toBeGreaterThan(0);
  }, 120_000);
});
