/**
 * make soak: two gateway processes on one Redis (AOF) in front of the provider simulator, driven at
 * about 70 % of the throughput measured first, for 10 minutes; Redis is restarted a third of the
 * way in and a gateway SIGKILLed (and started again) two thirds in. Reports 5xx and failed requests
 * against what was in flight at the kill, RSS over time, and request-log entries written against
 * requests answered. Writes bench/results/soak-latest.{json,md}. Not part of make test.
 *   node bench/soak.ts [--minutes 10] [--load 0.7] [--delay-ms 20]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { connectRedis } from '#contract';
import { startFleet } from '#devkit/fleet';
import { checkRedisBinary } from '#devkit/redis';
import { STATE_KEYS } from '#gateway/state/keys';
import { Load, type Window } from './lib/open-loop.ts';
import { rssMb } from './lib/rss.ts';
import { startSim } from './targets.ts';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    load: { type: 'string', default: '0.7' },
    'delay-ms': { type: 'string', default: '20' },
    out: { type: 'string', default: join(import.meta.dirname, 'results') },
  },
});
const MINUTES = Number(values.minutes);
const LOAD = Number(values.load);
const SOAK_MS = MINUTES * 60_000;
const KEY = 'sy_live_SoakTestKeyOnlyForLoopback0001';
const PROJECT_ID = 'soak.soak';
const log = (line: string) => process.stdout.write(`${new Date().toISOString().slice(11, 19)} ${line}\n`);

checkRedisBinary();
// Interrupted: exit, so the fleet's and the simulator's exit hooks stop their processes.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(130));
const v1 = 'switchyard.dev/v1alpha1';
const manifests = (simOrigin: string): object[] => [
  {
    apiVersion: v1,
    kind: 'Project',
    metadata: { name: 'soak', namespace: 'soak' },
    spec: {
      rateLimit: { requestsPerMinute: 10_000_000, tokensPerMinute: 10_000_000_000 },
      requestLogs: { maxEntries: 10_000_000 },
    },
  },
  {
    apiVersion: v1,
    kind: 'SpendCap',
    metadata: { name: 'roomy', namespace: 'soak' },
    spec: {
      projectRef: { name: 'soak' },
      scope: 'project',
      period: 'monthly',
      limitUsd: '1000000',
    },
  },
  {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'sim', namespace: 'soak' },
    stringData: { apiKey: 'sk-bench-simulator' },
  },
  {
    apiVersion: v1,
    kind: 'Provider',
    metadata: { name: 'sim', namespace: 'soak' },
    spec: {
      type: 'openai',
      baseURL: `${simOrigin}/v1`,
      credentials: { secretRef: { name: 'sim', key: 'apiKey' } },
      timeouts: { connectMs: 2000, firstByteMs: 10_000, totalMs: 30_000 },
      models: [
        {
          name: 'gpt-4o-mini',
          requestTypes: ['chat'],
          pricing: { inputUsdPerMTok: '0.15', outputUsdPerMTok: '0.60' },
        },
      ],
    },
  },
  {
    apiVersion: v1,
    kind: 'Workflow',
    metadata: { name: 'soak-chat', namespace: 'soak' },
    spec: {
      projectRef: { name: 'soak' },
      requestType: 'chat',
      provider: 'sim',
      model: 'gpt-4o-mini',
    },
  },
  {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'soak-key', namespace: 'soak' },
    stringData: { apiKey: KEY },
  },
  {
    apiVersion: v1,
    kind: 'ApiKey',
    metadata: { name: 'soak', namespace: 'soak' },
    spec: {
      projectRef: { name: 'soak' },
      scopes: ['ai'],
      secretRef: { name: 'soak-key', key: 'apiKey' },
    },
  },
];

const sim = await startSim(Number(values['delay-ms']), 1, 0);
const fleet = await startFleet({
  manifests: manifests(sim.origin),
  gateways: 2,
  // Spend caps fail closed (503) while Redis is away, by design; the soak measures the rest.
  env: { LOG_LEVEL: 'warn', SWITCHYARD_SPEND_CAPS_ON_REDIS_DOWN: 'open' },
});
const redis = connectRedis(fleet.redis.connection, { maxRetriesPerRequest: 1 });
redis.on('error', () => undefined);
const entriesAdded = async (): Promise<number> => {
  const info = (await redis.xinfo('STREAM', STATE_KEYS.logs(PROJECT_ID))) as unknown[];
  const at = info.indexOf('entries-added');
  return Number(info[at + 1]);
};

const load = new Load(
  fleet.gateways.map((g) => g.url),
  {
    path: '/v1/ai',
    headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      workflow: 'soak-chat',
      messages: [{ role: 'user', content: 'Say hello to the soak.' }],
    }),
  },
  { connections: 128, maxInFlight: 4000 },
);

const probe = await fetch(`${fleet.gateways[0]?.url}/v1/ai`, {
  method: 'POST',
  headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
  body: JSON.stringify({ workflow: 'soak-chat', messages: [{ role: 'user', content: 'hi' }] }),
});
if (probe.status !== 200) {
  log(
    `the first request answered ${probe.status}: ${await probe.text()}; problems: ${fleet.initial.problems.join('; ')}`,
  );
  await fleet.stop();
  await sim.proc.stop();
  process.exit(1);
}
log('warming up (15 s, 32 workers)');
await load.closedLoop(32, 15_000);
const maxRps = await load.closedLoop(64, 20_000);
const rate = Math.round(maxRps * LOAD);
log(`maximum: ${maxRps.toFixed(0)} req/s (64 workers, 20 s); soak at ${rate} req/s for ${MINUTES} min`);

await new Promise((r) => setTimeout(r, 3000));
const entriesBefore = await entriesAdded();
const lastIdBefore = ((await redis.xrevrange(STATE_KEYS.logs(PROJECT_ID), '+', '-', 'COUNT', 1))[0]?.[0] ??
  '0-0') as string;
const statusBefore = new Map(load.totals.byStatus);
const answeredBefore = [...statusBefore.values()].reduce((a, b) => a + b, 0);
const errorsBefore = load.totals.errors;
const sentBefore = load.totals.sent;
const shedBefore = load.totals.shed;

const rss: { atS: number; gateway: number; mb: number }[] = [];
const windows: Window[] = [];
const events: string[] = [];
const t0 = performance.now();
const at = () => (performance.now() - t0) / 1000;
const sampler = setInterval(() => {
  for (const g of fleet.gateways) {
    const mb = g.pid === undefined ? undefined : rssMb(g.pid);
    if (mb !== undefined) rss.push({ atS: at(), gateway: g.index, mb });
  }
}, 5000);

let redisRestartMs = 0;
let inFlightAtKill = 0;
let errorsAtKill = 0;
let killedDownMs = 0;
const faults = (async () => {
  await new Promise((r) => setTimeout(r, SOAK_MS / 3));
  const r0 = performance.now();
  events.push(`${at().toFixed(0)} s: Redis restart`);
  await fleet.redis.restart();
  redisRestartMs = performance.now() - r0;
  log(`Redis restarted in ${redisRestartMs.toFixed(0)} ms`);
  await new Promise((r) => setTimeout(r, SOAK_MS / 3 - redisRestartMs));
  const victim = fleet.gateways[1];
  const backend = load.backends[1];
  if (!victim || !backend) return;
  // The pod is gone at once (a Service stops sending it new requests when its endpoint goes);
  // what it held in flight is lost with it.
  backend.up = false;
  inFlightAtKill = backend.inFlight;
  errorsAtKill = load.totals.errors;
  const k0 = performance.now();
  events.push(`${at().toFixed(0)} s: gateway 1 SIGKILL with ${inFlightAtKill} requests in flight`);
  await victim.kill('SIGKILL');
  await victim.restart();
  backend.up = true;
  killedDownMs = performance.now() - k0;
  events.push(`${at().toFixed(0)} s: gateway 1 back after ${(killedDownMs / 1000).toFixed(1)} s`);
  log(`gateway 1 killed with ${inFlightAtKill} in flight; back after ${(killedDownMs / 1000).toFixed(1)} s`);
})();

await load.openLoop(
  rate,
  () => performance.now() - t0 >= SOAK_MS,
  (w) => {
    windows.push({ atS: Math.round(at()), ...w });
    log(
      `${Math.round(at())} s: sent ${w.sent}, ok ${w.ok}, non-2xx ${w.non2xx}, failed ${w.errors}, p50 ${w.p50.toFixed(1)} ms, p99 ${w.p99.toFixed(1)} ms`,
    );
  },
);
await faults;
clearInterval(sampler);
await new Promise((r) => setTimeout(r, 5000));

const answered = [...load.totals.byStatus.values()].reduce((a, b) => a + b, 0) - answeredBefore;
/** Entries written during the soak, and how many of them repeat a request_log_id already seen. */
async function entryIds(): Promise<{ total: number; unique: number }> {
  const ids = new Set<string>();
  let total = 0;
  let from = `(${lastIdBefore}`;
  for (;;) {
    const page = await redis.xrange(STATE_KEYS.logs(PROJECT_ID), from, '+', 'COUNT', 10_000);
    if (page.length === 0) break;
    for (const [id, fields] of page) {
      total++;
      const json = fields[fields.length - 1] ?? '{}';
      ids.add((JSON.parse(json) as { request_log_id?: string }).request_log_id ?? id);
      from = `(${id}`;
    }
  }
  return { total, unique: ids.size };
}
const written = await entryIds();
const entries = (await entriesAdded()) - entriesBefore;
const soakStatus = [...load.totals.byStatus.entries()]
  .map(([s, n]) => [s, n - (statusBefore.get(s) ?? 0)] as const)
  .filter(([, n]) => n > 0)
  .sort(([a], [b]) => a - b);
const status5xx = soakStatus.filter(([s]) => s >= 500).reduce((n, [, c]) => n + c, 0);
const failedAfterKill = load.totals.errors - errorsAtKill;
const failed = load.totals.errors - errorsBefore;
const meanRss = (gateway: number, fromS: number, toS: number) => {
  const xs = rss.filter((s) => s.gateway === gateway && s.atS >= fromS && s.atS < toS).map((s) => s.mb);
  return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : Number.NaN;
};
const soakS = SOAK_MS / 1000;
const killS = (2 * soakS) / 3;
const growth = (a: number, b: number) => ((b - a) / a) * 100;
const rssRows = [
  { what: 'gateway 0, whole run', from: meanRss(0, 60, 120), to: meanRss(0, soakS - 60, soakS + 1) },
  { what: 'gateway 1, until the kill', from: meanRss(1, 60, 120), to: meanRss(1, killS - 60, killS) },
  {
    what: 'gateway 1, after its restart',
    from: meanRss(1, killS + 30, killS + 60),
    to: meanRss(1, soakS - 30, soakS + 1),
  },
].map((r) => ({ ...r, growthPct: growth(r.from, r.to) }));
const p = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))] ?? Number.NaN;

const result = {
  date: new Date().toISOString(),
  minutes: MINUTES,
  maxRps: Math.round(maxRps),
  rate,
  sent: load.totals.sent - sentBefore,
  answered,
  status: Object.fromEntries(soakStatus),
  status5xx,
  failed,
  failedAfterKill,
  inFlightAtKill,
  shed: load.totals.shed - shedBefore,
  redisRestartMs: Math.round(redisRestartMs),
  gatewayDownMs: Math.round(killedDownMs),
  requestLogEntries: entries,
  requestLogEntriesUnique: written.unique,
  requestLogEntriesRepeated: written.total - written.unique,
  requestLogEntriesMissing: answered - written.unique,
  rss: rssRows,
  p50Ms: p(
    windows.map((w) => w.p50),
    0.5,
  ),
  worstWindowP99Ms: Math.max(...windows.map((w) => w.p99)),
  events,
  windows,
};
const md = `# Soak run (${result.date})

${MINUTES} minutes at ${rate} req/s (${(LOAD * 100).toFixed(0)} % of the ${result.maxRps} req/s measured first with 64
closed-loop workers), two gateway processes on one Redis (AOF), the simulator answering after
${values['delay-ms']} ms; Redis restarted at ${(soakS / 3).toFixed(0)} s (${result.redisRestartMs} ms), gateway 1 SIGKILLed at
${killS.toFixed(0)} s and started again (${(result.gatewayDownMs / 1000).toFixed(1)} s down).

| figure | value |
|---|---|
| requests sent / answered | ${result.sent} / ${answered} |
| answers by status | ${Object.entries(result.status)
  .map(([s, n]) => `${s}: ${n}`)
  .join(', ')} |
| 5xx answers | ${status5xx} |
| requests without an answer | ${failed} (after the kill: ${failedAfterKill}; in flight at the kill: ${inFlightAtKill}) |
| requests not sent (over 4000 in flight) | ${result.shed} |
| request-log entries written / distinct requests in them / answers | ${entries} / ${written.unique} / ${answered} (answers without an entry: ${Math.max(0, answered - written.unique)}; entries written twice: ${written.total - written.unique}) |
| latency, median of 10 s windows: p50 | ${result.p50Ms.toFixed(1)} ms |
| worst 10 s window p99 | ${result.worstWindowP99Ms.toFixed(1)} ms |
${rssRows.map((r) => `| RSS ${r.what} | ${r.from.toFixed(0)} → ${r.to.toFixed(0)} MB (${r.growthPct >= 0 ? '+' : ''}${r.growthPct.toFixed(1)} %) |`).join('\n')}

Events: ${events.join('; ')}.
`;
mkdirSync(values.out, { recursive: true });
writeFileSync(join(values.out, 'soak-latest.json'), `${JSON.stringify(result, null, 2)}\n`);
writeFileSync(join(values.out, 'soak-latest.md'), md);
process.stdout.write(`\n${md}\n`);

redis.disconnect();
await load.close();
await fleet.stop();
await sim.proc.stop();
