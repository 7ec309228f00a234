/**
 * The public URLs the gateway hands out (websocket_url in the async acknowledgement, callback_url
 * in the task.ai_generated webhook): from SWITCHYARD_PUBLIC_URL when configured, else from the
 * request, where X-Forwarded-Proto/Host count only when the peer is a configured trusted proxy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Ack,
  type AsyncGateway,
  ask,
  asyncConfig,
  startAsyncGateway,
  until,
  WEBHOOK_SECRET,
} from '../async/harness.ts';
import { API_KEY } from '../harness/manifests.ts';
import { startReceiver } from '../webhooks/receiver.ts';

const FORGED = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.example' };

let receiver: Awaited<ReturnType<typeof startReceiver>>;
beforeAll(async () => {
  receiver = await startReceiver(WEBHOOK_SECRET);
});
afterAll(() => receiver?.close());

/** One pipeline request (test mode) with `headers`: its acknowledgement and its callback_url. */
async function urlsOf(gw: AsyncGateway, headers: Record<string, string>) {
  const res = await fetch(`${gw.url}/v1/ai/async`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(ask('moderation')),
  });
  expect(res.status).toBe(202);
  const ack = (await res.json()) as Ack;
  const hook = await until(async () =>
    receiver.of('task.ai_generated').find((d) => d.json.channel_id === ack.channel_id),
  );
  return { websocket: ack.websocket_url, callback: String(hook.json.callback_url), channel: ack.channel_id };
}

async function gatewayWith(http: { trustedProxies?: string[] } = {}, publicUrl?: string) {
  return startAsyncGateway(asyncConfig({ webhooks: [{ url: receiver.url }], allowPrivate: true }), {
    http,
    async: { simulatedBackendMs: 3_600_000, ...(publicUrl ? { publicUrl } : {}) },
  });
}

describe('forwarded headers and public URLs', () => {
  const gateways: AsyncGateway[] = [];
  afterAll(async () => {
    for (const g of gateways) await g.close();
  });
  const start = async (...args: Parameters<typeof gatewayWith>) => {
    const g = await gatewayWith(...args);
    gateways.push(g);
    return g;
  };

  it('no trusted proxy configured: forged X-Forwarded-Host/Proto are ignored in both URLs', async () => {
    const gw = await start();
    const own = gw.url.replace(/^http:\/\//, '');
    const u = await urlsOf(gw, FORGED);
    console.log(`[forwarded] untrusted peer, forged headers: ${u.websocket} ${u.callback}`);
    expect(u.websocket).toBe(`ws://${own}/socket/websocket`);
    expect(u.callback).toBe(`http://${own}/v1/callback/${u.channel}`);
  });

  it('a peer outside SWITCHYARD_TRUSTED_PROXIES is not believed either', async () => {
    const gw = await start({ trustedProxies: ['10.0.0.0/8', '192.168.1.1'] });
    const u = await urlsOf(gw, FORGED);
    expect(u.websocket).not.toContain('evil.example');
    expect(u.callback).not.toContain('evil.example');
  });

  it('from a trusted proxy (here: loopback) they are what the client reached', async () => {
    const gw = await start({ trustedProxies: ['loopback'] });
    const u = await urlsOf(gw, { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'ai.example.com' });
    expect(u.websocket).toBe('wss://ai.example.com/socket/websocket');
    expect(u.callback).toBe(`https://ai.example.com/v1/callback/${u.channel}`);
  });

  it('SWITCHYARD_PUBLIC_URL wins over any header, trusted or not', async () => {
    const gw = await start({ trustedProxies: ['loopback'] }, 'https://api.example.net');
    const u = await urlsOf(gw, FORGED);
    expect(u.websocket).toBe('wss://api.example.net/socket/websocket');
    expect(u.callback).toBe(`https://api.example.net/v1/callback/${u.channel}`);
  });
});
