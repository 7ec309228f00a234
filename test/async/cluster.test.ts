import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningRedisCluster, startRedisCluster } from '#devkit/redis-cluster';
import { createRuntimeState } from '#gateway/state/index';
import { API_KEY } from '../harness/manifests.ts';
import { startReceiver } from '../webhooks/receiver.ts';
import { phoenixClient } from '../ws/phoenix-client.ts';
import {
  type Ack,
  type AsyncGateway,
  ask,
  asyncConfig,
  postJson,
  startAsyncGateway,
  until,
  WEBHOOK_SECRET,
  waitState,
} from './harness.ts';

/**
 * The Redis adapters on a real three-master Redis Cluster: BullMQ queues under their hash tag,
 * channel and token scripts on project-tagged keys, results over cluster pub/sub, a callback
 * deadline as a delayed job, webhooks delivered and verified.
 */
describe('async on Redis Cluster (two gateways)', () => {
  let cluster: RunningRedisCluster;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const gws: AsyncGateway[] = [];

  beforeAll(async () => {
    cluster = await startRedisCluster();
    receiver = await startReceiver(WEBHOOK_SECRET);
    const logger = pino({ level: 'silent' });
    for (let i = 0; i < 2; i++)
      gws.push(
        await startAsyncGateway(
          asyncConfig({
            webhooks: [
              { url: receiver.url, events: ['ai.response', 'task.ai_generated', 'callback.timeout'] },
            ],
            allowPrivate: true,
          }),
          {
            state: (metrics) =>
              createRuntimeState({
                redis: { clusterNodes: cluster.nodes },
                registry: metrics.registry,
                logger,
              }),
            async: { simulatedBackendMs: 3_600_000, callbackTimeoutMs: 1_500 },
          },
        ),
      );
    await until(
      async () => (gws.every((g) => g.gateway.state.redis?.status === 'ready') ? true : undefined),
      20_000,
    );
  }, 60_000);
  afterAll(async () => {
    await Promise.allSettled(gws.map((g) => g.close()));
    await receiver?.close();
    await cluster?.stop();
  });

  it('runs a job, delivers it to a socket on the other gateway and to the webhook', async () => {
    const [a, b] = gws as [AsyncGateway, AsyncGateway];
    const ack = (await postJson(`${a.url}/v1/ai/async`, API_KEY, ask('summary'))).body as Ack;
    const c = phoenixClient(`${b.url.replace('http', 'ws')}/socket`, ack.ws_token);
    const j = c.join(ack.websocket_channel);
    await until(async () => (j.responses.length ? true : undefined));
    expect((j.responses[0] as { meta: { status: string } }).meta.status).toBe('success');
    c.disconnect();
    const hook = await until(async () =>
      receiver.of('ai.response').find((d) => d.json.channel_id === ack.channel_id),
    );
    expect(hook.verified).toBe(true);
  });

  it('fires a callback deadline from Redis (delayed job)', async () => {
    const [a, b] = gws as [AsyncGateway, AsyncGateway];
    const ack = (await postJson(`${a.url}/v1/ai/async`, API_KEY, ask('moderation'))).body as Ack;
    await until(async () =>
      receiver.of('task.ai_generated').find((d) => d.json.channel_id === ack.channel_id),
    );
    const done = await waitState(b.url, ack.channel_id, 'timed_out');
    expect(done.result.error.code).toBe('callback_timeout');
    await until(async () =>
      receiver.of('callback.timeout').find((d) => d.json.channel_id === ack.channel_id),
    );
  });
});
