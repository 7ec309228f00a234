import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningRedis, startRedis } from '#devkit/redis';
import { createRuntimeState } from '#gateway/state/index';
import {
  type Ack,
  type AsyncGateway,
  ask,
  asyncConfig,
  postJson,
  startAsyncGateway,
  until,
  waitState,
} from '../async/harness.ts';
import { API_KEY } from '../harness/manifests.ts';
import { phoenixClient, startProxy } from './phoenix-client.ts';

/**
 * WebSocket delivery with the official `phoenix` client: three gateways on one Redis, the client
 * behind a Service-like proxy over the first two. Results reach the socket from whichever pod
 * finished the channel (Redis pub/sub), a drained pod sends 1012 and the client carries on at the
 * next pod, late joiners get the stored result, and wrong tokens and channels are refused.
 */
describe('WebSocket (Phoenix Channels v2) across three gateways on Redis', () => {
  let redis: RunningRedis;
  const gws: AsyncGateway[] = [];
  let proxy: Awaited<ReturnType<typeof startProxy>>;
  let socketUrl: string;
  const clients: ReturnType<typeof phoenixClient>[] = [];
  const alive = new Set([0, 1]);

  beforeAll(async () => {
    redis = await startRedis();
    const logger = pino({ level: 'silent' });
    for (let i = 0; i < 3; i++)
      gws.push(
        await startAsyncGateway(asyncConfig(), {
          state: (metrics) =>
            createRuntimeState({ redis: { url: redis.url }, registry: metrics.registry, logger }),
          async: { simulatedBackendMs: 3_600_000, lockMs: 2000 },
        }),
      );
    await until(async () => (gws.every((g) => g.gateway.state.redis?.status === 'ready') ? true : undefined));
    const portOf = (g: AsyncGateway) => Number(new URL(g.url).port);
    proxy = await startProxy(() => [...alive].map((i) => portOf(gws[i] as AsyncGateway)));
    socketUrl = `ws://127.0.0.1:${proxy.port}/socket`;
  });
  afterAll(async () => {
    for (const c of clients) c.disconnect();
    await proxy?.close();
    await Promise.allSettled(gws.map((g) => g.close()));
    await redis?.stop();
  });

  const accept = async (workflow: string, via = 2): Promise<Ack> => {
    const r = await postJson(`${(gws[via] as AsyncGateway).url}/v1/ai/async`, API_KEY, ask(workflow));
    expect(r.status).toBe(202);
    return r.body as Ack;
  };
  const client = (token: string) => {
    const c = phoenixClient(socketUrl, token);
    clients.push(c);
    return c;
  };

  it('joins and receives the response event published by another pod', async () => {
    const ack = await accept('moderation');
    await waitState(gws[2]?.url ?? '', ack.channel_id, 'awaiting_callback');
    const c = client(ack.ws_token);
    const j = c.join(ack.websocket_channel);
    await until(async () => (j.joinReplies.includes('ok') ? true : undefined));
    expect(j.responses).toHaveLength(0);
    const cb = await postJson(`${gws[2]?.url}/v1/callback/${ack.channel_id}`, API_KEY, {
      data: { verdict: 'ok' },
      task_id: 't-1',
    });
    expect(cb.status).toBe(200);
    await until(async () => (j.responses.length ? true : undefined));
    const res = j.responses[0] as { data: { verdict: string }; meta: { status: string } };
    expect(res.meta.status).toBe('success');
    expect(res.data.verdict).toBe('ok');
    c.disconnect();
  });

  it('gets a result that finished before it joined', async () => {
    const ack = await accept('summary');
    await waitState(gws[2]?.url ?? '', ack.channel_id, 'completed');
    const c = client(ack.ws_token);
    const j = c.join(ack.websocket_channel);
    await until(async () => (j.responses.length ? true : undefined));
    expect((j.responses[0] as { meta: { status: string } }).meta.status).toBe('success');
    await new Promise((r) => setTimeout(r, 100));
    expect(j.responses).toHaveLength(1);
    c.disconnect();

    // The token was spent by that delivery: using it again is refused with a reason.
    const again = client(ack.ws_token);
    await until(async () => (again.closes.length ? true : undefined));
    expect(again.closes[0]).toEqual({ code: 4002, reason: 'token_already_used' });
    again.disconnect();
  });

  it('refuses a wrong token, a token in use, and another channel', async () => {
    const bogus = client('wst_not-a-token');
    await until(async () => (bogus.closes.length ? true : undefined));
    expect(bogus.closes[0]).toEqual({ code: 4001, reason: 'invalid_token' });
    bogus.disconnect();

    const a = await accept('moderation');
    const b = await accept('moderation');
    const holder = client(a.ws_token);
    const hj = holder.join(a.websocket_channel);
    await until(async () => (hj.joinReplies.includes('ok') ? true : undefined));
    const second = client(a.ws_token);
    await until(async () => (second.closes.length ? true : undefined));
    expect(second.closes[0]).toEqual({ code: 4002, reason: 'token_already_used' });
    second.disconnect();
    holder.disconnect();

    // b's token may only join b's channel: another channel (here a's, or another project's) is refused.
    const intruder = client(b.ws_token);
    const ij = intruder.join(a.websocket_channel);
    await until(async () => (intruder.closes.length ? true : undefined));
    expect(ij.joinReplies).toContain('error:unauthorized');
    expect(intruder.closes[0]).toEqual({ code: 4003, reason: 'forbidden_channel' });
    intruder.disconnect();
    const foreign = client((await accept('moderation')).ws_token);
    foreign.join(`ai_response:team.other:${b.channel_id}`);
    await until(async () => (foreign.closes.length ? true : undefined));
    expect(foreign.closes[0]?.code).toBe(4003);
    foreign.disconnect();
  });

  it('reconnects after its pod is drained (1012) and still gets the result', async () => {
    const ack = await accept('moderation');
    await waitState(gws[2]?.url ?? '', ack.channel_id, 'awaiting_callback');
    const c = client(ack.ws_token);
    const j = c.join(ack.websocket_channel);
    await until(async () => (j.joinReplies.includes('ok') ? true : undefined));
    // The proxy sent this socket to gateway 0; drain it.
    alive.delete(0);
    await gws[0]?.close();
    await until(async () => (c.closes.length ? true : undefined));
    expect(c.closes[0]?.code).toBe(1012);
    await until(async () => (j.joinReplies.filter((r) => r === 'ok').length >= 2 ? true : undefined));
    await postJson(`${gws[2]?.url}/v1/callback/${ack.channel_id}`, API_KEY, { data: { after: 'drain' } });
    await until(async () => (j.responses.length ? true : undefined));
    expect((j.responses[0] as { data: { after: string } }).data.after).toBe('drain');
    console.log(`ws: reconnects=${c.opens() - 1} responses=${j.responses.length}`);
    expect(j.responses).toHaveLength(1);
  });
});
