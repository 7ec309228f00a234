/**
 * Slow and greedy clients against a real gateway on real sockets: stalled headers and stalled
 * bodies are answered 408 (in the API's error shape) and closed within the configured timeouts, the
 * body timeouts are in the request logs, idle keep-alive connections are reaped, the connection cap
 * refuses what exceeds it, and ordinary requests keep their latency meanwhile. Prints its figures.
 */
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { API_KEY, baseConfig, NO_AI_SCOPE_KEY, workflow } from '../harness/manifests.ts';

const HEADERS_TIMEOUT_MS = 1000;
const REQUEST_TIMEOUT_MS = 2000;
const KEEP_ALIVE_MS = 800;
const STALLED = 200;
/** Node checks timeouts every quarter of the headers timeout here (server-limits.ts); plus scheduling under load. */
const SLACK_MS = HEADERS_TIMEOUT_MS / 4 + 1000;

const config = () => [
  ...baseConfig('http://127.0.0.1:9', ['gpt-4o-mini']),
  workflow('quick', { provider: 'oai', model: 'gpt-4o-mini', testMode: true }),
];

interface Probe {
  socket: Socket;
  opened: number;
  closedAfter: Promise<number>;
  received: () => string;
}

function open(port: number, send: string): Promise<Probe> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let got = '';
    const opened = performance.now();
    const closedAfter = new Promise<number>((done) =>
      socket.once('close', () => done(performance.now() - opened)),
    );
    socket.on('data', (d) => {
      got += d.toString();
    });
    socket.once('error', () => undefined);
    socket.once('connect', () => {
      if (send) socket.write(send);
      resolve({ socket, opened, closedAfter, received: () => got });
    });
    socket.once('error', reject);
  });
}

async function ask(url: string): Promise<number> {
  const t = performance.now();
  const res = await fetch(`${url}/v1/ai`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ workflow: 'quick', messages: [{ role: 'user', content: 'hi' }] }),
  });
  await res.arrayBuffer();
  expect(res.status).toBe(200);
  return performance.now() - t;
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};

async function metric(gw: RunningGateway, name: string): Promise<number> {
  const text = await (await fetch(`${gw.metricsUrl}/metrics`)).text();
  const line = text.split('\n').find((l) => l.startsWith(name));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : Number.NaN;
}

describe('slow clients', () => {
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway(config(), {
      http: {
        headersTimeoutMs: HEADERS_TIMEOUT_MS,
        requestTimeoutMs: REQUEST_TIMEOUT_MS,
        keepAliveTimeoutMs: KEEP_ALIVE_MS,
        maxConnections: 1000,
      },
    });
  });
  afterAll(() => gw?.close());

  it(`${STALLED} stalled headers and ${STALLED} stalled bodies: 408 and closed within their timeouts; other requests keep their latency`, async () => {
    const port = Number(new URL(gw.url).port);
    const before: number[] = [];
    for (let i = 0; i < 40; i++) before.push(await ask(gw.url));

    const headers = await Promise.all(
      Array.from({ length: STALLED }, () =>
        open(port, 'POST /v1/ai HTTP/1.1\r\nHost: gw\r\nContent-Type: app'),
      ),
    );
    const bodies = await Promise.all(
      Array.from({ length: STALLED }, () =>
        open(
          port,
          `POST /v1/ai HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer ${API_KEY}\r\n` +
            'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"workflow":"quick",',
        ),
      ),
    );
    const during: number[] = [];
    const t0 = performance.now();
    while (performance.now() - t0 < REQUEST_TIMEOUT_MS - 200) during.push(await ask(gw.url));

    const headerCloses = await Promise.all(headers.map((p) => p.closedAfter));
    const bodyCloses = await Promise.all(bodies.map((p) => p.closedAfter));
    const answered408 = (ps: Probe[], code: string) =>
      ps.filter((p) => p.received().startsWith('HTTP/1.1 408') && p.received().includes(`"error":"${code}"`))
        .length;
    const h408 = answered408(headers, 'request_timeout');
    const b408 = answered408(bodies, 'request_timeout');
    console.log(
      `[slow clients] stalled headers: ${STALLED} opened, ${h408} answered 408, closed after ` +
        `${Math.min(...headerCloses).toFixed(0)}-${Math.max(...headerCloses).toFixed(0)} ms (timeout ${HEADERS_TIMEOUT_MS} ms)`,
    );
    console.log(
      `[slow clients] stalled bodies: ${STALLED} opened, ${b408} answered 408, closed after ` +
        `${Math.min(...bodyCloses).toFixed(0)}-${Math.max(...bodyCloses).toFixed(0)} ms (timeout ${REQUEST_TIMEOUT_MS} ms)`,
    );
    console.log(
      `[slow clients] other requests: p50 ${pct(before, 50).toFixed(1)} ms / p99 ${pct(before, 99).toFixed(1)} ms before, ` +
        `p50 ${pct(during, 50).toFixed(1)} ms / p99 ${pct(during, 99).toFixed(1)} ms during (${during.length} requests)`,
    );
    expect(h408).toBe(STALLED);
    expect(b408).toBe(STALLED);
    expect(Math.max(...headerCloses)).toBeLessThan(HEADERS_TIMEOUT_MS + SLACK_MS);
    expect(Math.min(...headerCloses)).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 50);
    expect(Math.max(...bodyCloses)).toBeLessThan(REQUEST_TIMEOUT_MS + SLACK_MS);
    expect(Math.min(...bodyCloses)).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
    // Ordinary requests were served all along, without waiting for the stalled ones.
    expect(during.length).toBeGreaterThan(20);
    expect(pct(during, 50)).toBeLessThan(Math.max(50, pct(before, 50) * 5));

    expect(await metric(gw, 'switchyard_http_request_timeouts_total{phase="headers"}')).toBe(STALLED);
    expect(await metric(gw, 'switchyard_http_request_timeouts_total{phase="body"}')).toBe(STALLED);
    // The body timeouts came after authentication: each is a request-log entry (408, request_timeout).
    await gw.gateway.state.flush();
    let timedOut = 0;
    let cursor: string | null = null;
    do {
      const q: string = cursor ? `&cursor=${encodeURIComponent(cursor)}` : '';
      const page = (await (
        await fetch(`${gw.url}/v1/request-logs?limit=500${q}`, {
          headers: { authorization: `Bearer ${NO_AI_SCOPE_KEY}` },
        })
      ).json()) as { data: { http_status: number; error_code: string | null }[]; next_cursor: string | null };
      timedOut += page.data.filter((e) => e.http_status === 408 && e.error_code === 'request_timeout').length;
      cursor = page.next_cursor;
    } while (cursor);
    expect(timedOut).toBe(STALLED);
  }, 30_000);

  it('idle keep-alive connections are closed after the keep-alive timeout, and counted', async () => {
    const port = Number(new URL(gw.url).port);
    const idleBefore = await metric(gw, 'switchyard_http_idle_connections_closed_total');
    const p = await open(port, 'GET /v1/models HTTP/1.1\r\nHost: gw\r\nAuthorization: Bearer x\r\n\r\n');
    const closedAfter = await p.closedAfter;
    console.log(
      `[slow clients] idle keep-alive connection closed after ${closedAfter.toFixed(0)} ms (timeout ${KEEP_ALIVE_MS} ms)`,
    );
    expect(p.received()).toMatch(/^HTTP\/1\.1 401/);
    expect(closedAfter).toBeGreaterThanOrEqual(KEEP_ALIVE_MS);
    expect(closedAfter).toBeLessThan(KEEP_ALIVE_MS + 1000 + SLACK_MS);
    expect(await metric(gw, 'switchyard_http_idle_connections_closed_total')).toBe(idleBefore + 1);
  });
});

describe('the connection cap', () => {
  const CAP = 50;
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGateway(config(), { http: { maxConnections: CAP, headersTimeoutMs: 20_000 } });
  });
  afterAll(() => gw?.close());

  it(`holds ${CAP} connections and closes every one past them on arrival; frees up as they go`, async () => {
    const port = Number(new URL(gw.url).port);
    const held = await Promise.all(
      Array.from({ length: CAP }, () => open(port, 'GET /v1/models HTTP/1.1\r\n')),
    );
    await new Promise((r) => setTimeout(r, 100));
    const t0 = performance.now();
    const extra = await Promise.all(
      Array.from({ length: 100 }, () => open(port, 'GET /v1/models HTTP/1.1\r\n')),
    );
    const refusedAfter = await Promise.all(extra.map((p) => p.closedAfter));
    const refused = await metric(gw, 'switchyard_http_connections_refused_total');
    const open_ = await metric(gw, 'switchyard_http_connections');
    console.log(
      `[slow clients] cap ${CAP}: ${held.length} held, ${extra.length} more closed on arrival within ` +
        `${Math.max(...refusedAfter).toFixed(0)} ms; refused_total ${refused}, open ${open_}`,
    );
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(extra.every((p) => p.received() === '')).toBe(true);
    expect(refused).toBe(100);
    expect(open_).toBe(CAP);
    for (const p of held) p.socket.destroy();
    await Promise.all(held.map((p) => p.closedAfter));
    // Room again: an ordinary request is served.
    await until(async () => (await metric(gw, 'switchyard_http_connections')) === 0);
    expect(await ask(gw.url)).toBeGreaterThan(0);
  });
});

async function until(check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
