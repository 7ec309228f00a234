/**
 * What a pod lets its clients hold (http/server-limits.ts): the limits read from the environment,
 * and, on a real listening Fastify server with the real options and hooks, the answers on a
 * connection that has no request to answer on (bad HTTP, oversized headers, headers or a body that
 * stop arriving), the connection cap and the idle keep-alive reaping, each counted.
 */
import { connect, type Socket } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfigError } from '#gateway/config/env';
import { sendError } from '#gateway/http/errors';
import {
  type HttpLimits,
  httpLimitsFromEnv,
  installServerLimits,
  MAX_PARAM_LENGTH,
  serverOptions,
} from '#gateway/http/server-limits';
import { DEFAULT_MAX_JSON_DEPTH } from '#gateway/json/depth';
import { GatewayMetrics } from '#gateway/observability/metrics';

describe('httpLimitsFromEnv', () => {
  it('defaults', () => {
    expect(httpLimitsFromEnv({})).toEqual({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 60_000,
      keepAliveTimeoutMs: 72_000,
      maxConnections: 4096,
      maxJsonDepth: DEFAULT_MAX_JSON_DEPTH,
      trustedProxies: [],
    });
    expect(MAX_PARAM_LENGTH).toBe(1024);
  });

  it('reads every variable; the proxy list is trimmed and its empty entries dropped', () => {
    expect(
      httpLimitsFromEnv({
        SWITCHYARD_HEADERS_TIMEOUT_MS: '2000',
        SWITCHYARD_REQUEST_TIMEOUT_MS: '30000',
        SWITCHYARD_KEEP_ALIVE_TIMEOUT_MS: '5000',
        SWITCHYARD_MAX_CONNECTIONS: '100',
        SWITCHYARD_MAX_JSON_DEPTH: '32',
        SWITCHYARD_TRUSTED_PROXIES: ' 10.0.0.0/8, loopback ,,::1,fd00::/8,192.168.1.7 ',
      }),
    ).toEqual({
      headersTimeoutMs: 2000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 5000,
      maxConnections: 100,
      maxJsonDepth: 32,
      trustedProxies: ['10.0.0.0/8', 'loopback', '::1', 'fd00::/8', '192.168.1.7'],
    });
  });

  /** The refusal's message, which names each variable at fault. */
  const refusal = (env: Record<string, string>): string => {
    try {
      httpLimitsFromEnv(env);
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as Error).message;
    }
    throw new Error('expected a ConfigError');
  };

  it.each([
    ['SWITCHYARD_TRUSTED_PROXIES', '10.0.0.0/33'],
    ['SWITCHYARD_TRUSTED_PROXIES', 'proxy.internal'],
    ['SWITCHYARD_TRUSTED_PROXIES', '10.0.0.0/8/1'],
    ['SWITCHYARD_TRUSTED_PROXIES', '::1/129'],
  ])('%s=%s is refused', (name, value) => {
    expect(refusal({ [name]: value })).toBe(
      `invalid environment:\n  ${name}.0: must be IPs, CIDRs, loopback, linklocal or uniquelocal`,
    );
  });

  it.each([
    ['SWITCHYARD_HEADERS_TIMEOUT_MS', '50'],
    ['SWITCHYARD_REQUEST_TIMEOUT_MS', '3600001'],
    ['SWITCHYARD_KEEP_ALIVE_TIMEOUT_MS', 'soon'],
    ['SWITCHYARD_MAX_CONNECTIONS', '0'],
    ['SWITCHYARD_MAX_JSON_DEPTH', '4'],
    ['SWITCHYARD_MAX_JSON_DEPTH', '1.5'],
  ])('%s=%s is out of range: refused, naming it', (name, value) => {
    expect(refusal({ [name]: value })).toMatch(new RegExp(`^invalid environment:\\n  ${name}: `));
  });

  it('a headers timeout longer than the request timeout is refused', () => {
    expect(refusal({ SWITCHYARD_HEADERS_TIMEOUT_MS: '20000', SWITCHYARD_REQUEST_TIMEOUT_MS: '10000' })).toBe(
      'invalid environment:\n  : SWITCHYARD_HEADERS_TIMEOUT_MS must not exceed SWITCHYARD_REQUEST_TIMEOUT_MS',
    );
  });
});

const LIMITS: HttpLimits = {
  headersTimeoutMs: 200,
  requestTimeoutMs: 400,
  keepAliveTimeoutMs: 200,
  maxConnections: 8,
  maxJsonDepth: 8,
  trustedProxies: [],
};

describe('serverOptions', () => {
  const metrics = new GatewayMetrics();
  it('Node’s receive timeouts, checked at a quarter of the headers timeout (50 ms to 1 s)', () => {
    const o = serverOptions({ ...LIMITS, headersTimeoutMs: 10_000, requestTimeoutMs: 60_000 }, metrics);
    expect(o).toMatchObject({
      requestTimeout: 60_000,
      keepAliveTimeout: 200,
      http: { headersTimeout: 10_000, connectionsCheckingInterval: 1000 },
      trustProxy: false,
    });
    expect(
      serverOptions({ ...LIMITS, headersTimeoutMs: 2000 }, metrics).http.connectionsCheckingInterval,
    ).toBe(500);
    expect(
      serverOptions({ ...LIMITS, headersTimeoutMs: 100 }, metrics).http.connectionsCheckingInterval,
    ).toBe(50);
  });

  it('trusted proxies are handed to Fastify as they are; none means X-Forwarded-* is not believed', () => {
    expect(
      serverOptions({ ...LIMITS, trustedProxies: ['loopback', '10.0.0.0/8'] }, metrics).trustProxy,
    ).toEqual(['loopback', '10.0.0.0/8']);
  });
});

describe('on a listening server', () => {
  let app: FastifyInstance | undefined;
  let metrics: GatewayMetrics;
  const sockets: Socket[] = [];

  async function listen(limits: HttpLimits = LIMITS): Promise<number> {
    metrics = new GatewayMetrics();
    app = Fastify(serverOptions(limits, metrics));
    installServerLimits(app, limits, metrics);
    app.setErrorHandler((err, req, reply) => sendError(err, req, reply));
    app.post('/echo', async (req) => ({ got: req.body }));
    app.get('/ok', async () => ({ ok: true }));
    await app.listen({ host: '127.0.0.1', port: 0 });
    const address = app.server.address();
    if (!address || typeof address === 'string') throw new Error('not listening');
    return address.port;
  }
  afterEach(async () => {
    for (const s of sockets.splice(0)) s.destroy();
    await app?.close();
    app = undefined;
  });

  /** Opens a connection, writes `data`, and collects what comes back until the server closes it. */
  function exchange(port: number, data: string): Promise<{ text: string; closed: boolean; socket: Socket }> {
    return new Promise((resolve, reject) => {
      const socket = connect(port, '127.0.0.1');
      sockets.push(socket);
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (c: string) => {
        text += c;
      });
      socket.on('error', reject);
      socket.on('close', () => resolve({ text, closed: true, socket }));
      socket.on('connect', () => {
        if (data) socket.write(data);
      });
    });
  }
  const bodyOf = (text: string): unknown => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4));
  const count = async (c: { get(): Promise<{ values: { labels: object; value: number }[] }> }) =>
    (await c.get()).values.map((v) => [v.labels, v.value]);

  it('bytes that are not HTTP/1.1: 400 in the native shape, then the connection is closed', async () => {
    const port = await listen();
    const r = await exchange(port, 'HELLO THERE\r\n\r\n');
    expect(r.text.startsWith('HTTP/1.1 400 Bad Request\r\n')).toBe(true);
    expect(r.text).toContain('\r\nConnection: close\r\n');
    expect(bodyOf(r.text)).toEqual({
      error: 'invalid_request',
      message: 'The request is not valid HTTP/1.1.',
    });
    expect(r.closed).toBe(true);
  });

  it('headers over Node’s limit: 431 headers_too_large', async () => {
    const port = await listen();
    const r = await exchange(port, `GET /ok HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
    expect(r.text.startsWith('HTTP/1.1 431 Request Header Fields Too Large\r\n')).toBe(true);
    expect(bodyOf(r.text)).toEqual({
      error: 'headers_too_large',
      message: 'The request headers are too large.',
    });
  });

  it('headers that stop arriving: 408 request_timeout within the timeout, counted as a headers timeout', async () => {
    const port = await listen();
    const started = performance.now();
    const r = await exchange(port, 'GET /ok HTTP/1.1\r\nHost: x\r\n');
    expect(performance.now() - started).toBeLessThan(LIMITS.headersTimeoutMs + 400);
    expect(r.text.startsWith('HTTP/1.1 408 Request Timeout\r\n')).toBe(true);
    expect(bodyOf(r.text)).toEqual({
      error: 'request_timeout',
      message: 'The request headers did not arrive within 200 ms.',
      hint: 'Send the whole request at once; the connection is closed.',
    });
    expect(await count(metrics.requestTimeouts)).toEqual([[{ phase: 'headers' }, 1]]);
  });

  it('a body that stops arriving: 408 answered on its own request through the error encoder, counted as a body timeout', async () => {
    const port = await listen();
    const r = await exchange(
      port,
      'POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"a":',
    );
    expect(r.text.startsWith('HTTP/1.1 408 Request Timeout\r\n')).toBe(true);
    expect(r.text.toLowerCase()).toContain('\r\nconnection: close\r\n');
    expect(bodyOf(r.text)).toEqual({
      error: 'request_timeout',
      message: 'The request body did not arrive within 400 ms.',
      hint: 'Send the whole request at once; the connection is closed.',
    });
    expect(await count(metrics.requestTimeouts)).toEqual([[{ phase: 'body' }, 1]]);
  });

  it('connections past the cap are closed on arrival and counted; the open one is served', async () => {
    const port = await listen({ ...LIMITS, maxConnections: 1, keepAliveTimeoutMs: 5000 });
    const first = connect(port, '127.0.0.1');
    sockets.push(first);
    await new Promise((r) => first.once('connect', r));
    await new Promise((r) => setTimeout(r, 20));
    const second = await exchange(port, 'GET /ok HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(second.text).toBe('');
    expect(await count(metrics.connectionsRefused)).toEqual([[{}, 1]]);
    expect(await count(metrics.connections)).toEqual([[{}, 1]]);
    const answer = new Promise<string>((r) => first.once('data', (c: Buffer) => r(c.toString())));
    first.write('GET /ok HTTP/1.1\r\nHost: x\r\n\r\n');
    expect((await answer).startsWith('HTTP/1.1 200 OK\r\n')).toBe(true);
  });

  it('an idle keep-alive connection is closed after the keep-alive timeout, and counted', async () => {
    const port = await listen();
    const r = await exchange(port, 'GET /ok HTTP/1.1\r\nHost: x\r\n\r\n');
    expect(r.text.startsWith('HTTP/1.1 200 OK\r\n')).toBe(true);
    expect(await count(metrics.idleClosed)).toEqual([[{}, 1]]);
    // The server sees its side of the socket close a moment after the client does.
    await vi.waitFor(async () => expect(await count(metrics.connections)).toEqual([[{}, 0]]));
  });
});
