/**
 * The console's speed bars on a real Redis holding 100,000 request-log entries: a filtered page of
 * the request-log API answers in at most 150 ms of server time (the median of several reads, from
 * the server's own Server-Timing header, so a loaded test machine's client side does not count),
 * and the request-log page is interactive (its filtered rows shown) within 1 s in headless chromium
 * (the median of several loads). Prints the figures.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningRedis, startRedis } from '#devkit/redis';
import type { RequestLogEntry } from '#gateway/state/types';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { apiKey, baseConfig, PROJECT, PROJECT_ID } from '../harness/manifests.ts';
import { entry } from '../state/fixtures.ts';
import { launch, openPage, type Watched } from './browser.ts';
import { CONSOLE_DIR, ensureBundle } from './bundle.ts';

const KEY = 'sy_live_SpeedBarsKey0123456789abcdefghijklm';
const ENTRIES = 100_000;
const RUNS = 7;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

let redis: RunningRedis;
let gw: RunningGateway;
let browser: Browser;
let w: Watched | undefined;
const projectId = PROJECT_ID;

beforeAll(async () => {
  await ensureBundle();
  [redis, browser] = await Promise.all([startRedis(), launch()]);
  const objects = [
    ...baseConfig('http://127.0.0.1:9').map((o) =>
      o.kind === 'Project' && o.metadata.name === PROJECT
        ? { ...o, spec: { requestLogs: { bodies: false, maxEntries: 200_000 } } }
        : o,
    ),
    ...apiKey('speed', KEY, { scopes: ['ai', 'console'] }),
  ];
  gw = await startGateway(objects, {
    redisUrl: redis.url,
    consoleWeb: { dir: CONSOLE_DIR, limits: { attempts: 1000 } },
  });
  // 100,000 entries over the last 28 hours through the gateway's own state writer: five workflows,
  // one in ten an error, no bodies (lists never carry them).
  const started = performance.now();
  const now = Date.now();
  for (let n = 0; n < ENTRIES; n++) {
    const e: RequestLogEntry = entry(projectId, n, {
      request_log_id: `rl_speed_${n}`,
      time: new Date(now - (ENTRIES - n) * 1000).toISOString(),
      workflow: `w${n % 5}`,
      ...(n % 10 === 3 ? { status: 'error', outcome: 'provider_error', http_status: 502 } : {}),
    });
    delete e.bodies;
    gw.gateway.state.write({ projectId, log: e, logCap: 200_000 });
    if (n % 2000 === 1999) await gw.gateway.state.flush();
  }
  await gw.gateway.state.flush();
  console.log(`speed: ${ENTRIES} entries written in ${Math.round(performance.now() - started)} ms`);
}, 300_000);

afterAll(async () => {
  await w?.context.close().catch(() => {});
  await browser?.close();
  await gw?.close();
  await redis?.stop();
});

describe('console speed with 100,000 request-log entries in Redis', () => {
  it('holds them all', async () => {
    const { Redis } = await import('ioredis');
    const { STATE_KEYS } = await import('#gateway/state/keys');
    const r = new Redis(redis.url);
    try {
      expect(await r.xlen(STATE_KEYS.logs(projectId))).toBe(ENTRIES);
    } finally {
      r.disconnect();
    }
  });

  it('a filtered page answers in ≤ 150 ms of server time (median of the Server-Timing figures)', async () => {
    const server: number[] = [];
    const client: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const t = performance.now();
      const res = await fetch(`${gw.url}/v1/request-logs?workflow=w1&status=error&limit=50`, {
        headers: { authorization: `Bearer ${KEY}` },
      });
      const body = (await res.json()) as { data: RequestLogEntry[] };
      client.push(performance.now() - t);
      expect(res.status).toBe(200);
      // w1 errors: n % 5 === 1 and n % 10 === 3 never meet; w3 holds the errors (n % 10 === 3).
      expect(body.data.every((e) => e.workflow === 'w1' && e.status === 'error')).toBe(true);
      const total = /total;dur=([\d.]+)/.exec(res.headers.get('server-timing') ?? '');
      expect(total).not.toBeNull();
      server.push(Number(total![1]));
    }
    const errors = await fetch(`${gw.url}/v1/request-logs?workflow=w3&status=error&limit=50`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    const page = (await errors.json()) as { data: RequestLogEntry[] };
    expect(page.data).toHaveLength(50);
    const filtered = Number(/total;dur=([\d.]+)/.exec(errors.headers.get('server-timing') ?? '')?.[1]);
    console.log(
      `speed: filtered page (a filter nothing matches, scan-bounded) server median ${median(server).toFixed(1)} ms (client ${median(client).toFixed(1)} ms); a full page of w3 errors ${filtered} ms`,
    );
    expect(median(server)).toBeLessThanOrEqual(150);
    expect(filtered).toBeLessThanOrEqual(150);
  });

  it('the request-log page is interactive within 1 s in headless chromium (median of several loads)', async () => {
    w = await openPage(browser, 'light');
    await w.page.goto(`${gw.url}/console/#/logs`);
    await w.page.getByLabel('API key').fill(KEY);
    await w.page.getByRole('button', { name: 'Sign in' }).click();
    await w.page.locator('main tbody tr').first().waitFor();
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      await w.page.goto('about:blank');
      const t = performance.now();
      await w.page.goto(`${gw.url}/console/#/logs?workflow=w3&status=error`);
      await w.page.locator('main tbody tr').nth(9).waitFor();
      await w.page.getByRole('link', { name: 'Older entries' }).waitFor();
      times.push(performance.now() - t);
    }
    console.log(
      `speed: request-log page interactive in ${times.map((x) => Math.round(x)).join(', ')} ms (median ${Math.round(median(times))} ms)`,
    );
    expect(median(times)).toBeLessThanOrEqual(1000);
    expect(w.problems).toEqual([]);
  }, 60_000);
});
