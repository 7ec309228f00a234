/**
 * Socket scale figures (not part of `make test`: run `node test/ws/scale.ts`): RSS per idle socket
 * on one gateway process holding 10,000 joined sockets, and fan-out latency (callback sent → the
 * `response` event at the client) for 1,000 sockets spread over 3 gateway processes on one Redis.
 */
import { readFile } from 'node:fs/promises';
import { WebSocket } from 'ws';
import { type FleetGateway, startFleet } from '#devkit/fleet';
import { asyncConfig } from '../async/harness.ts';
import { API_KEY } from '../harness/manifests.ts';

const IDLE = Number(process.env.IDLE_SOCKETS ?? 10_000);
const FANOUT = Number(process.env.FANOUT_SOCKETS ?? 1_000);

const fleet = await startFleet({
  manifests: asyncConfig(),
  gateways: 3,
  redis: 'single',
  env: {
    LOG_LEVEL: 'warn',
    SWITCHYARD_SIMULATED_BACKEND_MS: '3600000',
    SWITCHYARD_JOB_CONCURRENCY: '100',
    // Above the pod's default of 4,096 open connections, which the idle sockets would exceed.
    SWITCHYARD_MAX_CONNECTIONS: String(IDLE + FANOUT + 1000),
  },
});
const gws = fleet.gateways as FleetGateway[];

async function rssKb(pid: number | undefined): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until `done()` holds; fails after `ms` rather than measuring a half-finished state. */
async function until(what: string, done: () => boolean | Promise<boolean>, ms = 60_000): Promise<void> {
  const end = performance.now() + ms;
  while (!(await done())) {
    if (performance.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await tick(50);
  }
}

/** RSS once it has stopped moving: two readings 250 ms apart within 1 % of each other. */
async function settledRssKb(pid: number | undefined): Promise<number> {
  let last = await rssKb(pid);
  for (const end = performance.now() + 60_000; performance.now() < end; ) {
    await tick(250);
    const now = await rssKb(pid);
    if (Math.abs(now - last) <= last * 0.01) return now;
    last = now;
  }
  throw new Error('timed out after 60000 ms waiting for RSS to settle');
}

/** Resolves once every channel waits for its backend callback (a callback before that is refused). */
async function awaitingCallback(gs: FleetGateway[], channels: { channel_id: string }[]): Promise<void> {
  const left = new Set(channels.map((_, i) => i));
  await until(`${left.size} channels to await their callback`, async () => {
    for (const i of [...left]) {
      const g = gs[i % gs.length] as FleetGateway;
      const res = await fetch(`${g.url}/v1/ai/async/${channels[i]!.channel_id}`, {
        headers: { authorization: `Bearer ${API_KEY}` },
      });
      const { status } = (await res.json()) as { status: string };
      if (status === 'awaiting_callback') left.delete(i);
    }
    return left.size === 0;
  });
}

async function accept(
  g: FleetGateway,
): Promise<{ channel_id: string; ws_token: string; websocket_channel: string }> {
  const res = await fetch(`${g.url}/v1/ai/async`, {
    method: 'POST',
    headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({ workflow: 'moderation', messages: [{ role: 'user', content: 'x' }] }),
  });
  return (await res.json()) as { channel_id: string; ws_token: string; websocket_channel: string };
}

async function inBatches<T>(n: number, size: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out: T[] = [];
  for (let i = 0; i < n; i += size)
    out.push(...(await Promise.all(Array.from({ length: Math.min(size, n - i) }, (_, k) => fn(i + k)))));
  return out;
}

/** A joined socket; resolves once the join is acknowledged. */
function join(g: FleetGateway, token: string, topic: string, onResponse?: () => void): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${g.url.replace('http', 'ws')}/socket/websocket?token=${token}&vsn=2.0.0`);
    ws.on('open', () => ws.send(JSON.stringify(['1', '1', topic, 'phx_join', {}])));
    ws.on('message', (raw) => {
      const [, ref, , event] = JSON.parse(raw.toString()) as [string, string, string, string];
      if (event === 'phx_reply' && ref === '1') resolve(ws);
      if (event === 'response') onResponse?.();
    });
    ws.on('error', reject);
  });
}

try {
  // Idle sockets on gateway 0.
  const g0 = gws[0] as FleetGateway;
  const acks = await inBatches(IDLE, 100, () => accept(g0));
  const before = await settledRssKb(g0.pid);
  const sockets = await inBatches(IDLE, 200, (i) => join(g0, acks[i]!.ws_token, acks[i]!.websocket_channel));
  const after = await settledRssKb(g0.pid);
  console.log(
    `idle: ${sockets.length} joined sockets on one gateway: RSS ${Math.round(before / 1024)} MB → ${Math.round(after / 1024)} MB, ` +
      `${(((after - before) * 1024) / sockets.length / 1024).toFixed(1)} KB per socket`,
  );
  for (const s of sockets) s.terminate();

  // Fan-out across three gateways: socket on pod i % 3, callback to pod (i + 1) % 3.
  const fan = await inBatches(FANOUT, 100, (i) => accept(gws[i % 3] as FleetGateway));
  await awaitingCallback(gws, fan);
  const arrived: number[] = new Array(FANOUT).fill(0);
  const fanSockets = await inBatches(FANOUT, 200, (i) =>
    join(gws[i % 3] as FleetGateway, fan[i]!.ws_token, fan[i]!.websocket_channel, () => {
      arrived[i] = performance.now();
    }),
  );
  const sent: number[] = new Array(FANOUT).fill(0);
  await inBatches(FANOUT, 50, async (i) => {
    sent[i] = performance.now();
    const g = gws[(i + 1) % 3] as FleetGateway;
    const res = await fetch(`${g.url}/v1/callback/${fan[i]!.channel_id}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ data: { i } }),
    });
    await res.arrayBuffer();
  });
  await until('every response event', () => arrived.every((t) => t !== 0), 10_000).catch((err: unknown) =>
    console.log(`${(err as Error).message}: ${arrived.filter((t) => t !== 0).length}/${FANOUT} arrived`),
  );
  const lat = arrived
    .map((t, i) => t - (sent[i] as number))
    .filter((_, i) => arrived[i] !== 0)
    .sort((a, b) => a - b);
  const q = (p: number) =>
    (lat[Math.min(lat.length - 1, Math.floor(p * lat.length))] ?? Number.NaN).toFixed(1);
  console.log(
    `fan-out: ${lat.length}/${FANOUT} events over 3 gateways (callback sent → event at client, ms): p50 ${q(0.5)} p95 ${q(0.95)} p99 ${q(0.99)} max ${q(1)}`,
  );
  for (const s of fanSockets) s.terminate();
} finally {
  await fleet.stop();
}
