import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RETRY_DELAYS_MS } from '#gateway/webhooks/schedule';
import {
  type Ack,
  type AsyncGateway,
  ask,
  asyncConfig,
  CONSOLE_KEY,
  getJson,
  manualClock,
  postJson,
  startAsyncGateway,
  until,
  WEBHOOK_SECRET,
} from '../async/harness.ts';
import { API_KEY } from '../harness/manifests.ts';
import { type Delivery, startReceiver, verifyServiceSignature } from './receiver.ts';

type Script = (n: number) => { status: number; headers?: Record<string, string> };

/**
 * Webhook deliveries on the embedded runner with an injected clock: signatures (standardwebhooks +
 * service-signature, tampered and stale fail), the retry schedule with jitter and Retry-After,
 * success on attempt N, dead letter after the last attempt, 410 disabling the endpoint, replay
 * with the same webhook-id, and one webhook_attempt request-log entry per attempt.
 */
describe('webhook deliveries', () => {
  const clock = manualClock();
  let gw: AsyncGateway;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  const scripts = new Map<string, Script>();
  const counts = new Map<string, number>();

  beforeAll(async () => {
    receiver = await startReceiver(WEBHOOK_SECRET, (d) => {
      const ch = String(d.json.channel_id);
      const n = (counts.get(ch) ?? 0) + 1;
      counts.set(ch, n);
      return scripts.get(ch)?.(n) ?? { status: 200 };
    });
    gw = await startAsyncGateway(asyncConfig({ webhooks: [{ url: receiver.url }], allowPrivate: true }), {
      now: clock.now,
    });
  });
  afterAll(async () => {
    await gw?.close();
    await receiver?.close();
  });

  const settleTime = () => new Promise((r) => setTimeout(r, 120));
  const of = (channelId: string): Delivery[] =>
    receiver.deliveries.filter((d) => d.json.channel_id === channelId);
  /**
   * Waits until the receiver saw `n` deliveries and the gateway recorded them (so the next attempt
   * is scheduled from the clock as it is now, before the test moves it).
   */
  const waitCount = async (channelId: string, n: number) => {
    await until(async () => (of(channelId).length >= n ? true : undefined));
    await until(async () => {
      const r = await getJson(
        `${gw.url}/v1/request-logs?type=webhook_attempt&channel_id=${channelId}`,
        CONSOLE_KEY,
      );
      return (r.body.data as unknown[]).length >= n ? true : undefined;
    });
  };
  /** Starts a job whose ai.response deliveries follow `script`. */
  const job = async (script?: Script): Promise<string> => {
    const r = await postJson(`${gw.url}/v1/ai/async`, API_KEY, ask('summary'));
    const id = (r.body as Ack).channel_id;
    if (script) scripts.set(id, script);
    return id;
  };

  it('signs every delivery: standardwebhooks verifies it, service-signature recomputes; tampered and stale fail', async () => {
    const ch = await job();
    await waitCount(ch, 1);
    const d = of(ch)[0] as Delivery;
    expect(d.verified).toBe(true);
    expect(d.json).toMatchObject({
      type: 'ai.response',
      channel_id: ch,
      status: 'success',
      workflow: 'summary',
    });
    expect(String(d.headers['service-signature'])).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(String(d.headers['webhook-signature'])).toMatch(/^v1,[A-Za-z0-9+/=]+$/);
    const headers = {
      'webhook-id': String(d.headers['webhook-id']),
      'webhook-timestamp': String(d.headers['webhook-timestamp']),
      'webhook-signature': String(d.headers['webhook-signature']),
    };
    const tampered = d.body.replace('"success"', '"error"');
    expect(() => new Webhook(WEBHOOK_SECRET).verify(tampered, headers)).toThrow();
    const nowSec = Math.floor(Date.now() / 1000);
    expect(
      verifyServiceSignature(WEBHOOK_SECRET, String(d.headers['service-signature']), tampered, nowSec),
    ).toBe(false);
    expect(
      verifyServiceSignature(
        `whsec_${Buffer.from('another-secret').toString('base64')}`,
        String(d.headers['service-signature']),
        d.body,
        nowSec,
      ),
    ).toBe(false);

    // A gateway clock 10 minutes behind signs stale timestamps: both checks refuse them.
    clock.advance(-600_000);
    const stale = await job();
    await waitCount(stale, 1);
    clock.advance(600_000);
    const s = of(stale)[0] as Delivery;
    expect(s.verified).toBe(false);
    expect(() =>
      new Webhook(WEBHOOK_SECRET).verify(s.body, {
        'webhook-id': String(s.headers['webhook-id']),
        'webhook-timestamp': String(s.headers['webhook-timestamp']),
        'webhook-signature': String(s.headers['webhook-signature']),
      }),
    ).toThrow(/too old/i);
    expect(
      verifyServiceSignature(WEBHOOK_SECRET, String(s.headers['service-signature']), s.body, nowSec),
    ).toBe(false);
  });

  it('retries on the schedule with jitter, honours Retry-After, succeeds on attempt 4; one log entry per attempt', async () => {
    const ch = await job((n) =>
      n === 1
        ? { status: 503 }
        : n === 2
          ? { status: 503, headers: { 'retry-after': '600' } }
          : n === 3
            ? { status: 500 }
            : { status: 200 },
    );
    await waitCount(ch, 1);
    clock.advance(3_900); // below the earliest jittered retry (5 s - 20 %)
    await settleTime();
    expect(of(ch)).toHaveLength(1);
    clock.advance(2_200); // past the latest (5 s + 20 %)
    await waitCount(ch, 2);
    clock.advance(590_000); // Retry-After 600 s beats the 30 s step
    await settleTime();
    expect(of(ch)).toHaveLength(2);
    clock.advance(11_000);
    await waitCount(ch, 3);
    clock.advance(RETRY_DELAYS_MS[2] * 1.21);
    await waitCount(ch, 4);
    clock.advance(RETRY_DELAYS_MS[3] * 1.21);
    await settleTime();
    expect(of(ch)).toHaveLength(4);
    expect(new Set(of(ch).map((d) => d.id)).size).toBe(1);
    await gw.gateway.state.flush();
    const logs = await getJson(
      `${gw.url}/v1/request-logs?type=webhook_attempt&channel_id=${ch}`,
      CONSOLE_KEY,
    );
    const entries = (
      logs.body.data as { outcome: string; http_status: number; details: { attempt: number } }[]
    ).reverse();
    expect(entries.map((e) => [e.details.attempt, e.http_status, e.outcome])).toEqual([
      [1, 503, 'retry'],
      [2, 503, 'retry'],
      [3, 500, 'retry'],
      [4, 200, 'success'],
    ]);
  });

  it('dead-letters after the last attempt; replay delivers once more with the same webhook-id', async () => {
    let healthy = false;
    const since = clock.now();
    const ch = await job(() => (healthy ? { status: 200 } : { status: 500 }));
    await waitCount(ch, 1);
    for (let k = 0; k < RETRY_DELAYS_MS.length; k++) {
      clock.advance((RETRY_DELAYS_MS[k] as number) * 1.21);
      await waitCount(ch, k + 2);
    }
    expect(of(ch)).toHaveLength(8);
    const list = await until(async () => {
      const r = await getJson(`${gw.url}/v1/webhooks/dead-letters?since=${since}`, CONSOLE_KEY);
      const found = (
        r.body.data as { id: string; attempts: number; last_status: number; body: string }[]
      ).find((d) => d.body.includes(ch));
      return found;
    });
    expect(list.attempts).toBe(8);
    expect(list.last_status).toBe(500);
    expect(list.id).toBe(of(ch)[0]?.id);
    clock.advance(RETRY_DELAYS_MS[6] * 2);
    await settleTime();
    expect(of(ch)).toHaveLength(8);

    healthy = true;
    const replay = await postJson(`${gw.url}/v1/webhooks/dead-letters/${list.id}/replay`, CONSOLE_KEY, {});
    expect(replay.status).toBe(200);
    await waitCount(ch, 9);
    await settleTime();
    expect(of(ch)).toHaveLength(9);
    expect(of(ch)[8]?.id).toBe(list.id);
    const last = of(ch)[8] as Delivery;
    const sig = String(last.headers['service-signature']);
    expect(verifyServiceSignature(WEBHOOK_SECRET, sig, last.body, Math.floor(clock.now() / 1000))).toBe(true);
    const after = await getJson(`${gw.url}/v1/webhooks/dead-letters?since=${since}`, CONSOLE_KEY);
    expect((after.body.data as { id: string }[]).some((d) => d.id === list.id)).toBe(false);
    expect(
      (await postJson(`${gw.url}/v1/webhooks/dead-letters/${list.id}/replay`, CONSOLE_KEY, {})).status,
    ).toBe(404);
  });

  it('410 disables the endpoint: later events dead-letter without a request; replay since a time re-enables it', async () => {
    const since = clock.now();
    const gone = await job(() => ({ status: 410 }));
    await waitCount(gone, 1);
    const disabled = await until(async () => {
      const r = await getJson(`${gw.url}/v1/webhooks/dead-letters?since=${since}`, CONSOLE_KEY);
      return (r.body.disabled_endpoints as string[]).includes(receiver.url) ? r.body : undefined;
    });
    expect(disabled.data).toHaveLength(1);
    const next = await job();
    await until(async () => {
      const r = await getJson(`${gw.url}/v1/webhooks/dead-letters?since=${since}`, CONSOLE_KEY);
      return r.body.data.length === 2 ? true : undefined;
    });
    expect(of(next)).toHaveLength(0);
    scripts.set(gone, () => ({ status: 200 }));
    const replayed = await postJson(`${gw.url}/v1/webhooks/dead-letters/replay`, CONSOLE_KEY, { since });
    expect(replayed.body).toEqual({ replayed: 2 });
    await waitCount(next, 1);
    await waitCount(gone, 2);
    const r = await getJson(`${gw.url}/v1/webhooks/dead-letters?since=${since}`, CONSOLE_KEY);
    expect(r.body.data).toHaveLength(0);
    expect(r.body.disabled_endpoints).toEqual([]);
  });
});
