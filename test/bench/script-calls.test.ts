/**
 * Redis calls per request on the bench workflow (bench/config, `bench-chat-d0`: project and key
 * rate limits, a project cap and a primary-slot cap, request logs and usage), from `INFO
 * commandstats` of a real Redis around N requests to a real gateway process (`gateway/src/main.ts`,
 * the snapshot published by the operator's publisher). Prints script calls (EVALSHA, EVAL, FCALL)
 * and all commands per request; asserts the script-call bound the code reaches today.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fleet, startFleet } from '#devkit/fleet';
import { writeConfig } from '../../bench/lib/config.ts';
import { perSimulator } from '../../bench/targets.ts';
import { metricValue } from '../harness/metrics.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';

const KEY = 'sy_live_BenchmarkKeyOnlyForLoopback01';
const REQUESTS = 200;
/**
 * Admission runs on the pod's leases (no call); what a turn's requests log goes out as one write per
 * project, and the leases report what they cost every 100 ms or so. Under load that is well under one
 * script call per request; one request at a time, each turn holds one request: its write, plus a
 * few hundredths for the leases' reports and renewals.
 */
const SCRIPT_CALLS_BOUND: Record<number, number> = { 1: 1, 10: 1 };

function commandstats(info: string): Map<string, number> {
  const calls = new Map<string, number>();
  for (const m of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(m[1]!, Number(m[2]));
  return calls;
}

describe('Redis calls per request on the bench workflow', () => {
  let sim: Simulator;
  let fleet: Fleet;
  let redis: Redis;
  beforeAll(async () => {
    sim = await startSimulator();
    const dir = writeConfig('stateful', sim.url, perSimulator([{ delayMs: 0, origin: sim.url }]));
    fleet = await startFleet({ configDir: dir, gateways: 1, redis: 'single', env: { LOG_LEVEL: 'warn' } });
    redis = new Redis(fleet.redis.url);
  }, 60_000);
  afterAll(async () => {
    redis?.disconnect();
    await fleet?.stop();
    await sim?.close();
  });

  /** `maxTokens`: the token limits hold it as the answer's size, and the answer uses far less. */
  const ask = async (maxTokens?: number) => {
    const res = await fetch(`${fleet.gateways[0]!.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'bench-chat-d0',
        messages: [{ role: 'user', content: 'Say hello to the benchmark, briefly.' }],
        ...(maxTokens ? { max_tokens: maxTokens } : {}),
      }),
    });
    await res.arrayBuffer();
    return res.status;
  };

  /** switchyard_spend_lease_calls_total of the gateway, every kind and outcome. */
  const leaseCalls = () => metricValue(fleet.gateways[0]!.metricsUrl, 'switchyard_spend_lease_calls_total');

  /** Script calls per request, `concurrency` requests at a time. */
  const measure = async (concurrency: number, maxTokens?: number): Promise<number> => {
    for (let i = 0; i < 5; i++) expect(await ask()).toBe(200); // scripts loaded, connections warm
    // Writes of the warm-up requests land before the count starts.
    await new Promise((r) => setTimeout(r, 300));
    await redis.config('RESETSTAT');
    const leaseCallsBefore = await leaseCalls();
    let next = 0;
    const statuses: number[] = [];
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (next < REQUESTS) {
          next++;
          statuses.push(await ask(maxTokens));
        }
      }),
    );
    // Settles and log writes go out after each answer: give the last ones time to land.
    await new Promise((r) => setTimeout(r, 500));
    const calls = commandstats(await redis.info('commandstats'));
    const leases = (await leaseCalls()) - leaseCallsBefore;
    // This client's own INFO (and the RESETSTAT) are not the gateway's.
    calls.delete('info');
    calls.delete('config|resetstat');
    const scripts = ['evalsha', 'eval', 'fcall', 'evalsha_ro', 'eval_ro', 'fcall_ro'].reduce(
      (n, c) => n + (calls.get(c) ?? 0),
      0,
    );
    const all = [...calls.values()].reduce((a, b) => a + b, 0);
    const top = [...calls].sort((a, b) => b[1] - a[1]).map(([c, n]) => `${c} ${(n / REQUESTS).toFixed(2)}`);
    console.log(
      `redis calls on the bench workflow: ${REQUESTS} requests (${concurrency} at a time${maxTokens ? `, max_tokens ${maxTokens}` : ''}): script calls per request ${(scripts / REQUESTS).toFixed(2)} (lease calls ${(leases / REQUESTS).toFixed(2)}, the rest request-log writes), commands executed per request, those inside the scripts included, ${(all / REQUESTS).toFixed(2)} [${top.join(', ')}]`,
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(REQUESTS);
    expect(scripts).toBeGreaterThan(0);
    // The gateway's own count of its lease calls: each is one of the script calls Redis counted.
    expect(leases).toBeLessThanOrEqual(scripts);
    expect(scripts / REQUESTS).toBeLessThanOrEqual(SCRIPT_CALLS_BOUND[concurrency]!);
    return scripts / REQUESTS;
  };

  for (const concurrency of [1, 10])
    it(`${REQUESTS} requests, ${concurrency} at a time: script calls per request ≤ ${SCRIPT_CALLS_BOUND[concurrency]}, with max_tokens as without`, async () => {
      const plain = await measure(concurrency);
      // Token units taken for max_tokens and not used return to the pod's lease: no call of their own.
      expect(await measure(concurrency, 256)).toBeLessThanOrEqual(plain + 0.1);
    }, 60_000);
});
