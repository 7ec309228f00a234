import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AsyncGateway, ask, asyncConfig, postJson, startAsyncGateway, until } from '../async/harness.ts';
import { API_KEY } from '../harness/manifests.ts';
import { startReceiver, verifyServiceSignature } from './receiver.ts';

const OLD = `whsec_${randomBytes(32).toString('base64')}`;
const NEW = `whsec_${randomBytes(32).toString('base64')}`;

/** While a secret rotates (the Secret holds "new old"), every delivery verifies under either secret. */
describe('webhook secret rotation', () => {
  let gw: AsyncGateway;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    receiver = await startReceiver(OLD);
    gw = await startAsyncGateway(
      asyncConfig({ webhooks: [{ url: receiver.url, secret: `${NEW} ${OLD}` }], allowPrivate: true }),
    );
  });
  afterAll(async () => {
    await gw?.close();
    await receiver?.close();
  });

  it('signs with both: a receiver on the old secret and one on the new both verify', async () => {
    const ch = (await postJson(`${gw.url}/v1/ai/async`, API_KEY, ask('summary'))).body.channel_id as string;
    const d = await until(async () => receiver.deliveries.find((x) => x.json.channel_id === ch));
    expect(d.verified).toBe(true); // old secret, standardwebhooks + service-signature
    const headers = {
      'webhook-id': String(d.headers['webhook-id']),
      'webhook-timestamp': String(d.headers['webhook-timestamp']),
      'webhook-signature': String(d.headers['webhook-signature']),
    };
    expect(() => new Webhook(NEW).verify(d.body, headers)).not.toThrow();
    const nowSec = Math.floor(Date.now() / 1000);
    expect(verifyServiceSignature(NEW, String(d.headers['service-signature']), d.body, nowSec)).toBe(true);
    expect(String(d.headers['service-signature']).match(/v1=/g)).toHaveLength(2);
    expect(String(d.headers['webhook-signature']).split(' ')).toHaveLength(2);
    const stranger = `whsec_${randomBytes(32).toString('base64')}`;
    expect(() => new Webhook(stranger).verify(d.body, headers)).toThrow();
  });
});
