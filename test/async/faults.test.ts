import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fleet, type FleetGateway, startFleet } from '#devkit/fleet';
import { API_KEY } from '../harness/manifests.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import { startReceiver } from '../webhooks/receiver.ts';
import { asyncConfig, until, WEBHOOK_SECRET } from './harness.ts';

/**
 * Faults with real gateway processes on one Redis (AOF): a pod SIGKILLed in the middle of 1,000
 * async jobs, the pod that ran the pipeline jobs killed while their callbacks are pending, and a
 * Redis restart with a webhook backlog. Every test prints its counts.
 */
describe('async jobs under faults (fleet of 3 gateways)', () => {
  let sim: Simulator;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let fleet: Fleet;
  let failing = false;

  beforeAll(async () => {
    sim = await startSimulator();
    // While `failing`, each event's first attempt is refused (503): its retry waits in Redis.
    const seen = new Set<string>();
    receiver = await startReceiver(WEBHOOK_SECRET, (d) => {
      const first = !seen.has(d.id);
      seen.add(d.id);
      return { status: failing && first ? 503 : 200 };
    });
    const manifests = [
      ...asyncConfig({
        webhooks: [{ url: receiver.url, events: ['ai.response', 'ai.error', 'callback.timeout'] }],
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
          models: [{ name: 'slow-1000', requestTypes: ['chat'] }],
        },
      },
      {
        apiVersion: 'switchyard.dev/v1alpha1',
        kind: 'Workflow',
        metadata: { name: 'slow', namespace: 'team' },
        spec: { projectRef: { name: 'app' }, requestType: 'chat', provider: 'sim', model: 'slow-1000' },
      },
    ];
    fleet = await startFleet({
      manifests,
      gateways: 3,
      redis: 'single',
      env: {
        LOG_LEVEL: 'warn',
        SWITCHYARD_JOB_LOCK_MS: '2000',
        SWITCHYARD_JOB_CONCURRENCY: '50',
        SWITCHYARD_CALLBACK_TIMEOUT_MS: '3000',
        SWITCHYARD_SIMULATED_BACKEND_MS: '3600000',
      },
    });
  }, 90_000);
  afterAll(async () => {
    await fleet?.stop();
    await receiver?.close();
    await sim?.close();
  });

  /** POSTs to a running gateway, moving on to the next one if the connection fails. */
  async function accept(workflow: string, first: number): Promise<string> {
    for (let i = 0; i < 6; i++) {
      const g = fleet.gateways[(first + i) % fleet.gateways.length] as FleetGateway;
      if (!g.running) continue;
      try {
        const res = await fetch(`${g.url}/v1/ai/async`, {
          method: 'POST',
          headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({ workflow, messages: [{ role: 'user', content: 'hi' }] }),
          signal: AbortSignal.timeout(5000),
        });
        if (res.status === 202) return ((await res.json()) as { channel_id: string }).channel_id;
        await res.arrayBuffer();
      } catch {}
    }
    throw new Error('no gateway accepted the request');
  }

  const running = () => fleet.gateways.filter((g) => g.running);
  async function stateOf(
    channelId: string,
  ): Promise<{ status: string; result: { meta: { status: string } } | null }> {
    const g = running()[0] as FleetGateway;
    const res = await fetch(`${g.url}/v1/ai/async/${channelId}`, {
      headers: { authorization: `Bearer ${API_KEY}` },
    });
    return (await res.json()) as { status: string; result: { meta: { status: string } } | null };
  }
  const deliveredTo = (event: string, channels: Set<string>) => {
    const byChannel = new Map<string, Set<string>>();
    let raw = 0;
    for (const d of receiver.of(event)) {
      const ch = String(d.json.channel_id);
      if (!channels.has(ch)) continue;
      raw++;
      const ids = byChannel.get(ch) ?? new Set<string>();
      byChannel.set(ch, ids);
      ids.add(d.id);
    }
    return { byChannel, raw };
  };

  it('1,000 jobs, one gateway SIGKILLed mid-way: every job ends with exactly one result', async () => {
    const channels = new Set<string>();
    const N = 1000;
    // The simulator keeps its last 1,000 requests: count them as they come.
    sim.clearRequests();
    let providerCalls = 0;
    const counter = setInterval(() => {
      providerCalls += sim.requests().length;
      sim.clearRequests();
    }, 50);
    let killedAt = -1;
    const inflight: Promise<void>[] = [];
    for (let i = 0; i < N; i++) {
      if (i === 400) {
        killedAt = i;
        await Promise.all(inflight.splice(0));
        await fleet.gateways[1]?.kill('SIGKILL');
      }
      inflight.push(accept('slow', i).then((ch) => void channels.add(ch)));
      if (inflight.length >= 40) await Promise.all(inflight.splice(0));
    }
    await Promise.all(inflight);
    expect(channels.size).toBe(N);
    await until(
      async () =>
        deliveredTo('ai.response', channels).byChannel.size +
          deliveredTo('ai.error', channels).byChannel.size >=
        N
          ? true
          : undefined,
      90_000,
      200,
    );
    clearInterval(counter);
    providerCalls += sim.requests().length;
    const ok = deliveredTo('ai.response', channels);
    const failed = deliveredTo('ai.error', channels);
    let terminal = 0;
    let completed = 0;
    for (const ch of channels) {
      const s = await stateOf(ch);
      if (s.result && ['completed', 'failed'].includes(s.status)) terminal++;
      if (s.status === 'completed') completed++;
    }
    const multi = [...ok.byChannel.values(), ...failed.byChannel.values()].filter(
      (ids) => ids.size !== 1,
    ).length;
    const both = [...ok.byChannel.keys()].filter((ch) => failed.byChannel.has(ch)).length;
    console.log(
      `faults/kill: jobs=${N} killed gateway 1 after ${killedAt} accepted; terminal=${terminal} completed=${completed} ` +
        `result webhooks: channels=${ok.byChannel.size + failed.byChannel.size} distinct results=${ok.byChannel.size + failed.byChannel.size - multi} deliveries=${ok.raw + failed.raw} ` +
        `(ai.response ${ok.raw}, ai.error ${failed.raw}) channels with !=1 result=${multi} with both=${both} ` +
        `provider calls≈${providerCalls} (above ${N}: jobs the killed pod held, run again elsewhere)`,
    );
    expect(terminal).toBe(N);
    expect(ok.byChannel.size + failed.byChannel.size).toBe(N);
    expect(multi).toBe(0);
    expect(both).toBe(0);
    // Deliveries are at least once: one cut short by the kill is sent again, with the same webhook-id.
    expect(ok.raw + failed.raw).toBeGreaterThanOrEqual(N);
    await fleet.gateways[1]?.restart();
  }, 180_000);

  it('kill the pod that ran pipeline jobs while their callbacks are pending: every deadline still fires', async () => {
    const N = 100;
    const channels = new Set<string>();
    for (let i = 0; i < N; i++) channels.add(await accept('moderation', 0));
    // Killed as soon as the jobs were accepted: it may have run some, its timers are in Redis.
    await fleet.gateways[0]?.kill('SIGKILL');
    await until(
      async () => (deliveredTo('callback.timeout', channels).byChannel.size >= N ? true : undefined),
      60_000,
      200,
    );
    let timedOut = 0;
    for (const ch of channels) if ((await stateOf(ch)).status === 'timed_out') timedOut++;
    const hooks = deliveredTo('callback.timeout', channels);
    console.log(
      `faults/deadlines: pending=${N} timed_out=${timedOut} timeout webhooks: channels=${hooks.byChannel.size} deliveries=${hooks.raw}`,
    );
    expect(timedOut).toBe(N);
    expect(hooks.byChannel.size).toBe(N);
    await fleet.gateways[0]?.restart();
  }, 120_000);

  it('Redis restarted (AOF) with a webhook backlog: no delivery lost', async () => {
    const N = 200;
    failing = true;
    const channels = new Set<string>();
    const t0 = Date.now();
    for (let i = 0; i < N; i += 20)
      for (const ch of await Promise.all(Array.from({ length: 20 }, (_, k) => accept('summary', i + k))))
        channels.add(ch);
    const tAccepted = Date.now();
    // Every first attempt fails: the backlog is N delayed retries in Redis.
    await until(
      async () => (deliveredTo('ai.response', channels).byChannel.size >= N ? true : undefined),
      30_000,
      100,
    );
    const before = deliveredTo('ai.response', channels).raw;
    // The receiver recovers; the retries (due in 4-6 s) wait in Redis, which restarts now.
    failing = false;
    const tBacklog = Date.now();
    await fleet.redis.restart();
    const tRestarted = Date.now();
    const acked = () =>
      new Set(
        receiver
          .of('ai.response')
          .filter((d) => channels.has(String(d.json.channel_id)) && d.answered === 200 && d.verified)
          .map((d) => String(d.json.channel_id)),
      );
    await until(async () => (acked().size >= N ? true : undefined), 60_000, 200);
    const all = deliveredTo('ai.response', channels);
    console.log(
      `faults/redis-restart timing (ms): accept=${tAccepted - t0} backlog=${tBacklog - tAccepted} restart=${tRestarted - tBacklog} drained=${Date.now() - tRestarted}`,
    );
    const maxIds = Math.max(...[...all.byChannel.values()].map((s) => s.size));
    console.log(
      `faults/redis-restart: events=${N} attempts before the restart=${before} (first attempts, refused: ${N}) attempts after=${all.raw - before} ` +
        `acknowledged channels=${acked().size} distinct webhook-ids per channel max=${maxIds}`,
    );
    expect(acked().size).toBe(N);
    expect(maxIds).toBe(1);
  }, 120_000);
});
