import { createServer, type Server } from 'node:http';
import { hostname } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isBlockedAddress } from '#gateway/outbound/addresses';
import { BlockedDestinationError, outboundFetch } from '#gateway/outbound/fetch';
import {
  type AsyncGateway,
  ask,
  asyncConfig,
  CONSOLE_KEY,
  getJson,
  postJson,
  startAsyncGateway,
  until,
} from '../async/harness.ts';
import { API_KEY } from '../harness/manifests.ts';

/**
 * The SSRF guard: every address class a project may not reach, literal, by name, by DNS and by
 * redirect, is refused before a connection is opened. A counting server on loopback proves it:
 * zero requests reach it.
 */
describe('SSRF guard for outbound fetches', () => {
  let hits = 0;
  let target: Server;
  let redirector: Server;
  let port = 0;
  let redirectOrigin = '';

  beforeAll(async () => {
    target = createServer((_req, res) => {
      hits++;
      res.end('reached');
    });
    await new Promise<void>((r) => target.listen(0, '127.0.0.1', () => r()));
    port = (target.address() as { port: number }).port;
    redirector = createServer((req, res) => {
      const to = req.url === '/to-name' ? `http://localhost:${port}/` : `http://127.0.0.1:${port}/`;
      res.writeHead(307, { location: to }).end();
    });
    await new Promise<void>((r) => redirector.listen(0, '127.0.0.1', () => r()));
    redirectOrigin = `http://127.0.0.1:${(redirector.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => target.close(r));
    await new Promise((r) => redirector.close(r));
  });

  const corpus = () => [
    `http://127.0.0.1:${port}/`,
    `http://127.1.2.3:${port}/`,
    `http://[::1]:${port}/`,
    `http://[::ffff:127.0.0.1]:${port}/`,
    `http://[::ffff:7f00:1]:${port}/`,
    `http://2130706433:${port}/`,
    `http://0x7f000001:${port}/`,
    `http://0.0.0.0:${port}/`,
    'http://10.0.0.1/',
    'http://10.255.255.254:8080/',
    'http://172.16.0.1/',
    'http://172.31.255.1/',
    'http://192.168.1.1/',
    'http://169.254.169.254/latest/meta-data/',
    'http://[fd00::1]/',
    'http://[fd00:ec2::254]/',
    'http://[fe80::1]/',
    'http://100.64.0.1/',
    `http://localhost:${port}/`,
    `http://api.localhost:${port}/`,
    // A name that resolves (here through /etc/hosts) to loopback: refused after DNS.
    `http://${hostname()}:${port}/`,
    'file:///etc/passwd',
  ];

  it('refuses the whole corpus with zero requests reaching anything', async () => {
    let refused = 0;
    for (const url of corpus()) {
      await expect(
        outboundFetch(url, { method: 'POST', body: '{}', timeoutMs: 2000 }, { allowPrivateNetworks: false }),
        url,
      ).rejects.toBeInstanceOf(BlockedDestinationError);
      refused++;
    }
    // Redirects to loopback (by address and by name) from an origin that is itself allowed.
    const trusted = new Set([redirectOrigin]);
    for (const path of ['/to-ip', '/to-name']) {
      await expect(
        outboundFetch(
          `${redirectOrigin}${path}`,
          { method: 'GET', timeoutMs: 2000 },
          { allowPrivateNetworks: false, trustedOrigins: trusted },
        ),
      ).rejects.toBeInstanceOf(BlockedDestinationError);
      refused++;
    }
    console.log(`ssrf: refused=${refused} fetches=${hits}`);
    expect(hits).toBe(0);
  });

  it('classifies addresses', () => {
    for (const ip of [
      '127.0.0.1',
      '::1',
      '10.1.2.3',
      '172.20.0.1',
      '192.168.0.1',
      '169.254.169.254',
      'fd00::1',
      'fe80::1',
      '::ffff:10.0.0.1',
      '::',
      '0.0.0.0',
    ])
      expect(isBlockedAddress(ip), ip).toBe(true);
    for (const ip of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '172.32.0.1', '11.0.0.1'])
      expect(isBlockedAddress(ip), ip).toBe(false);
  });

  it('lets private destinations through when the Project allows them', async () => {
    const before = hits;
    const r = await outboundFetch(
      `http://127.0.0.1:${port}/`,
      { method: 'GET', timeoutMs: 2000 },
      { allowPrivateNetworks: true },
    );
    expect(r.status).toBe(200);
    expect(hits).toBe(before + 1);
    hits = before;
  });

  describe('webhooks to a private URL without allowPrivateNetworks', () => {
    let gw: AsyncGateway;
    beforeAll(async () => {
      gw = await startAsyncGateway(asyncConfig({ webhooks: [{ url: `http://127.0.0.1:${port}/hook` }] }));
    });
    afterAll(() => gw?.close());

    it('are refused and logged as blocked attempts, never sent', async () => {
      const ack = await postJson(`${gw.url}/v1/ai/async`, API_KEY, ask('summary'));
      const ch = ack.body.channel_id as string;
      const entry = await until(async () => {
        const r = await getJson(
          `${gw.url}/v1/request-logs?type=webhook_attempt&channel_id=${ch}`,
          CONSOLE_KEY,
        );
        return r.body.data[0];
      });
      expect(entry.error_code).toMatch(/^blocked: /);
      expect(entry.http_status).toBe(0);
      expect(hits).toBe(0);
    });
  });
});
