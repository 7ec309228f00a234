/**
 * A backend callback that fails (Redis is down when it arrives) changes nothing, so its retry
 * completes the channel and the result reaches the WebSocket and the webhooks, exactly once. On a
 * real Redis with its append-only file, stopped and started again under the gateway.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningRedis, startRedis } from '#devkit/redis';
import { ASYNC_KEYS } from '#gateway/async/keys';
import { createRuntimeState } from '#gateway/state/index';
import {
  type Ack,
  type AsyncGateway,
  ask,
  asyncConfig,
  getJson,
  postJson,
  startAsyncGateway,
  until,
  WEBHOOK_SECRET,
  waitState,
} from '../async/harness.ts';
import { API_KEY } from '../harness/manifests.ts';
import { startReceiver } from '../webhooks/receiver.ts';
import { phoenixClient } from '../ws/phoenix-client.ts';

describe('callback retry after a failed callback (Redis down)', () => {
  let redis: RunningRedis;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let gw: AsyncGateway;

  beforeAll(async () => {
    redis = await startRedis({ appendonly: true });
    receiver = await startReceiver(WEBHOOK_SECRET);
    gw = await startAsyncGateway(
      asyncConfig({ webhooks: [{ url: receiver.url, events: ['task.completed'] }], allowPrivate: true }),
      {
        state: (metrics, logger) =>
          createRuntimeState({ redis: { url: redis.url }, registry: metrics.registry, logger }),
        async: { simulatedBackendMs: 3_600_000 },
      },
    );
    await (gw.gateway.state as { whenReady?: () => Promise<void> }).whenReady?.();
  }, 60_000);
  afterAll(async () => {
    await gw?.close();
    await receiver?.close();
    await redis?.stop();
  });

  it('the failed callback is a 503 that changed nothing; the retry is delivered once to socket and webhook', async () => {
    const ack = (await postJson(`${gw.url}/v1/ai/async`, API_KEY, ask('moderation'))).body as Ack;
    await waitState(gw.url, ack.channel_id, 'awaiting_callback');
    const client = phoenixClient(ack.websocket_url.replace(/\/websocket$/, ''), ack.ws_token);
    const joined = client.join(ack.websocket_channel);
    await until(async () => (joined.joinReplies.length ? true : undefined));
    expect(joined.joinReplies).toEqual(['ok']);

    const callback = { data: { approved: true }, task_id: 't-1' };
    await redis.stop();
    const failed = await postJson(`${gw.url}/v1/callback/${ack.channel_id}`, API_KEY, callback);
    expect(failed.status).toBe(503);
    expect(failed.body.error).toBe('service_unavailable');

    await redis.restart();
    // The gateway's clients reconnect on their own; the result bus listens again before the retry.
    const probe = new Redis(redis.url);
    await until(async () => {
      const [, subscribers] = (await probe.pubsub('NUMSUB', ASYNC_KEYS.results)) as [string, number];
      const state = await getJson(`${gw.url}/v1/ai/async/${ack.channel_id}`, API_KEY).catch(() => undefined);
      return subscribers > 0 && state?.status === 200 ? true : undefined;
    }, 20_000);
    probe.disconnect();
    const still = await getJson(`${gw.url}/v1/ai/async/${ack.channel_id}`, API_KEY);
    expect(still.body.status).toBe('awaiting_callback');

    const retried = await postJson(`${gw.url}/v1/callback/${ack.channel_id}`, API_KEY, callback);
    expect(retried.status).toBe(200);
    expect(retried.body).toEqual({ status: 'completed', channel_id: ack.channel_id, task_id: 't-1' });
    const done = await waitState(gw.url, ack.channel_id, 'completed');
    expect(done.result.data.approved).toBe(true);
    await until(async () => (joined.responses.length ? true : undefined));
    const hooks = await until(async () => {
      const found = receiver.of('task.completed').filter((d) => d.json.channel_id === ack.channel_id);
      return found.length ? found : undefined;
    });
    await new Promise((r) => setTimeout(r, 300));
    const again = await postJson(`${gw.url}/v1/callback/${ack.channel_id}`, API_KEY, callback);
    console.log(
      `[callback retry] failed callback: ${failed.status}; retry: ${retried.status}; ` +
        `socket responses: ${joined.responses.length}; task.completed webhooks: ${hooks.length}; a third callback: ${again.status}`,
    );
    expect(joined.responses).toHaveLength(1);
    expect(hooks).toHaveLength(1);
    expect(again.status).toBe(409);
    client.disconnect();
  }, 60_000);
});
