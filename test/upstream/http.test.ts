import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpstreamTarget } from '#gateway/providers/types';
import { UpstreamError } from '#gateway/upstream/errors';
import { closeUpstreamPools, getPool, readJson, send, splitUrl } from '#gateway/upstream/http';

let server: Server;
let base: string;
const sockets = new Set<import('node:net').Socket>();
const BIG_CHUNKS = 512;
let bigWritten = 0;
let bigClosedEarly = false;

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = req.url ?? '/';
    if (url === '/ok') {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ ok: true, remotePort: req.socket.remotePort }));
    } else if (url === '/hang') {
      // never answers
    } else if (url === '/slow-body') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"a":');
      setTimeout(() => res.end('1}'), 1000);
    } else if (url === '/reset') {
      req.socket.destroy();
    } else if (url === '/bad') {
      res.end('{"a":');
    } else if (url === '/bom') {
      res.end(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"é":1}')]));
    } else if (url === '/big') {
      // 32 MiB in 64 KiB writes, counting what the socket took so far.
      const chunk = Buffer.alloc(64 * 1024, 120);
      let left = BIG_CHUNKS;
      bigWritten = 0;
      bigClosedEarly = false;
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      res.on('close', () => {
        if (left > 0) bigClosedEarly = true;
      });
      const pump = () => {
        while (left > 0) {
          left--;
          bigWritten += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      pump();
    }
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await closeUpstreamPools();
  for (const s of sockets) s.destroy();
  await new Promise<void>((r) => server.close(() => r()));
});

function target(overrides: Partial<UpstreamTarget['timeouts']> = {}): UpstreamTarget {
  return {
    providerName: 'test',
    type: 'openai',
    baseURL: base,
    apiKey: 'k',
    model: 'm',
    streaming: true,
    timeouts: { connectMs: 1000, firstByteMs: 2000, totalMs: 5000, ...overrides },
  };
}

async function failure(p: Promise<unknown>): Promise<UpstreamError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(UpstreamError);
    return err as UpstreamError;
  }
  throw new Error('expected a failure');
}

const open = (path: string, t: UpstreamTarget, signal = new AbortController().signal) =>
  send({ target: t, url: `${base}${path}`, method: 'GET', headers: {}, signal });

async function get(path: string, t: UpstreamTarget, signal = new AbortController().signal) {
  return readJson(await open(path, t, signal));
}

describe('upstream http', () => {
  it('splits URLs without URL objects', () => {
    expect(splitUrl('https://api.x.com/v1/chat?a=1')).toEqual({
      origin: 'https://api.x.com',
      path: '/v1/chat?a=1',
    });
    expect(splitUrl('http://h:8080')).toEqual({ origin: 'http://h:8080', path: '/' });
  });

  it('reuses one pool and keep-alive connections per origin', async () => {
    const t = target();
    expect(getPool(base, 1000)).toBe(getPool(base, 1000));
    const ports = new Set<number>();
    for (let i = 0; i < 20; i++) ports.add(((await get('/ok', t)) as { remotePort: number }).remotePort);
    // Sequential requests reuse kept-alive sockets (undici may alternate between two).
    expect(ports.size).toBeLessThanOrEqual(2);
  });

  it('first-byte timeout → UPSTREAM_TIMEOUT 504, retryable', async () => {
    const err = await failure(get('/hang', target({ firstByteMs: 100 })));
    expect(err.code).toBe('UPSTREAM_TIMEOUT');
    expect(err.status).toBe(504);
    expect(err.retryable).toBe(true);
  });

  it('total deadline covers the body too', async () => {
    const started = Date.now();
    const err = await failure(get('/slow-body', target({ totalMs: 200 })));
    expect(err.code).toBe('UPSTREAM_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(900);
  });

  it('headers in before the first-byte timeout: the total deadline still ends a stalled body', async () => {
    const started = Date.now();
    const err = await failure(get('/slow-body', target({ firstByteMs: 100, totalMs: 300 })));
    expect(err.code).toBe('UPSTREAM_TIMEOUT');
    expect(err.message).toBe('upstream did not complete within 300ms');
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(Date.now() - started).toBeLessThan(900);
  });

  it('the nearer of the two timeouts is the one reported', async () => {
    const firstByte = await failure(get('/hang', target({ firstByteMs: 100, totalMs: 5000 })));
    expect(firstByte.message).toBe('upstream sent no response headers within 100ms');
    const total = await failure(get('/hang', target({ firstByteMs: 2000, totalMs: 100 })));
    expect(total.message).toBe('upstream did not complete within 100ms');
  });

  it('client abort → UPSTREAM_ABORTED, not retryable', async () => {
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 50);
    const err = await failure(get('/hang', target(), ac.signal));
    expect(err.code).toBe('UPSTREAM_ABORTED');
    expect(err.retryable).toBe(false);
    const pre = new AbortController();
    pre.abort();
    expect((await failure(get('/ok', target(), pre.signal))).code).toBe('UPSTREAM_ABORTED');
  });

  it('connection reset → UPSTREAM_CONNECT 502, retryable', async () => {
    const err = await failure(get('/reset', target()));
    expect(err.code).toBe('UPSTREAM_CONNECT');
    expect(err.status).toBe(502);
    expect(err.retryable).toBe(true);
  });

  it('connection refused → UPSTREAM_CONNECT', async () => {
    const t = { ...target(), baseURL: 'http://127.0.0.1:1' };
    const res = send({
      target: t,
      url: 'http://127.0.0.1:1/x',
      headers: {},
      signal: new AbortController().signal,
    });
    const err = await failure(res);
    expect(err.code).toBe('UPSTREAM_CONNECT');
  });

  it('invalid JSON → UPSTREAM_BAD_RESPONSE, retryable', async () => {
    const err = await failure(get('/bad', target()));
    expect(err.code).toBe('UPSTREAM_BAD_RESPONSE');
    expect(err.retryable).toBe(true);
  });

  it('drops a UTF-8 byte order mark before parsing', async () => {
    expect(await get('/bom', target())).toEqual({ é: 1 });
  });

  it('a reader that stops pauses the socket, then still receives every byte', async () => {
    const res = await open('/big', target());
    const it = res.body[Symbol.asyncIterator]();
    let bytes = ((await it.next()).value as Buffer).length;
    // Loopback would deliver all 32 MiB in this time if the body kept reading the socket.
    await sleep(300);
    expect(bigWritten).toBeLessThan(BIG_CHUNKS * 64 * 1024);
    for (let r = await it.next(); !r.done; r = await it.next()) bytes += r.value.length;
    res.deadline.done();
    expect(bytes).toBe(BIG_CHUNKS * 64 * 1024);
  });

  it('leaving an iteration early aborts the upstream request', async () => {
    const res = await open('/big', target());
    for await (const _chunk of res.body) break;
    res.deadline.done();
    expect(res.body.destroyed).toBe(true);
    await expect.poll(() => bigClosedEarly).toBe(true);
  });
});
