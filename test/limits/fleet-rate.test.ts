/**
 * One rate limit, three gateway processes, one Redis: 3 × 100 clients send as fast as they can (far
 * over the limit) for a few seconds, and the fleet admits no more than the GCRA allows in that time
 * (the burst plus the rate times the elapsed time), because every pod takes from the same cells in
 * one Lua call timed by Redis TIME. The same for a token limit whose requests hold far more than
 * they use (`max_tokens`): what they did not use returns to the pods' leases and is used again, and
 * the tokens really used stay within the bound.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type Fleet, startFleet } from '#devkit/fleet';
import { apiKey, project, workflow } from '../harness/manifests.ts';

const KEY = 'sy_live_FleetRateKey0123456789abcdefghijkl';
const PER_MINUTE = 600;
const SECONDS = 4;
const CLIENTS_PER_GATEWAY = 100;
const TOKEN_KEY = 'sy_live_FleetTokenKey0123456789abcdefghijk';
const TOKENS_PER_MINUTE = 6000;
const echoForTokens = workflow('echo-tokens', { provider: 'none', model: 'none', testMode: true });

let fleet: Fleet;
beforeAll(async () => {
  fleet = await startFleet({
    manifests: [
      project('app', { rateLimit: { requestsPerMinute: PER_MINUTE } }),
      ...apiKey('main', KEY),
      // Test mode: no provider, so the gateways' own work is all there is to a request.
      workflow('echo', { provider: 'none', model: 'none', testMode: true }),
      project('tokens', { rateLimit: { tokensPerMinute: TOKENS_PER_MINUTE } }),
      ...apiKey('tokens', TOKEN_KEY, { project: 'tokens' }),
      { ...echoForTokens, spec: { ...echoForTokens.spec, projectRef: { name: 'tokens' } } },
      {
        apiVersion: 'switchyard.dev/v1alpha1',
        kind: 'Provider',
        metadata: { name: 'none', namespace: 'team' },
        spec: { type: 'openai-compatible', baseURL: 'http://127.0.0.1:9', models: [{ name: 'none' }] },
      },
    ],
    gateways: 3,
    redis: 'single',
    env: { LOG_LEVEL: 'warn' },
  });
}, 60_000);
afterAll(async () => {
  await fleet?.stop();
});

interface Flood {
  admitted: number;
  limited: number;
  other: number;
  /** The sum of what `onAdmitted` returned for each 200. */
  counted: number;
  elapsed: number;
}

/**
 * CLIENTS_PER_GATEWAY clients per gateway send `body` with `key` to /v1/ai, each the next as soon as
 * the last is answered, for SECONDS.
 */
async function flood(
  key: string,
  body: Record<string, unknown>,
  onAdmitted: (res: Response) => Promise<number>,
): Promise<Flood> {
  const f: Flood = { admitted: 0, limited: 0, other: 0, counted: 0, elapsed: 0 };
  const started = performance.now();
  const stopAt = started + SECONDS * 1000;
  const client = async (url: string) => {
    while (performance.now() < stopAt) {
      const res = await fetch(`${url}/v1/ai`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (res.status === 200) {
        f.admitted++;
        f.counted += await onAdmitted(res);
        continue;
      }
      await res.arrayBuffer();
      if (res.status === 429) f.limited++;
      else f.other++;
    }
  };
  await Promise.all(
    fleet.gateways.flatMap((g) => Array.from({ length: CLIENTS_PER_GATEWAY }, () => client(g.url))),
  );
  f.elapsed = (performance.now() - started) / 1000;
  return f;
}

it(`3 processes × ${CLIENTS_PER_GATEWAY} clients over a ${PER_MINUTE}/min limit admit at most burst + rate × time`, async () => {
  const { admitted, limited, other, elapsed } = await flood(
    KEY,
    { workflow: 'echo', messages: [{ role: 'user', content: 'hi' }] },
    async (res) => {
      await res.arrayBuffer();
      return 1;
    },
  );
  const allowed = PER_MINUTE + Math.floor((PER_MINUTE / 60) * elapsed);
  const offered = admitted + limited + other;
  console.log(
    `rate limit across 3 gateways: ${offered} requests in ${elapsed.toFixed(2)} s (${(offered / elapsed).toFixed(0)}/s); admitted ${admitted}, allowed ${allowed} (burst ${PER_MINUTE} + ${PER_MINUTE}/min × elapsed), 429: ${limited}`,
  );
  expect(other).toBe(0);
  // Meaningful only if the clients asked for well over the limit.
  expect(offered).toBeGreaterThanOrEqual(2 * allowed);
  expect(admitted).toBeLessThanOrEqual(allowed);
  expect(admitted).toBeGreaterThanOrEqual(PER_MINUTE);
}, 60_000);

it(`3 processes × ${CLIENTS_PER_GATEWAY} clients holding max_tokens 200 over a ${TOKENS_PER_MINUTE} tokens/min limit use at most burst + rate × time`, async () => {
  const {
    admitted,
    limited,
    other,
    counted: used,
    elapsed,
  } = await flood(
    TOKEN_KEY,
    {
      workflow: 'echo-tokens',
      format: 'wrapped',
      max_tokens: 200,
      messages: [{ role: 'user', content: 'hi' }],
    },
    async (res) =>
      ((await res.json()) as { meta: { usage: { total_tokens: number } } }).meta.usage.total_tokens,
  );
  const allowed = TOKENS_PER_MINUTE + Math.floor((TOKENS_PER_MINUTE / 60) * elapsed);
  console.log(
    `token limit across 3 gateways: ${admitted + limited + other} requests in ${elapsed.toFixed(2)} s, each holding ~200 tokens at admission; admitted ${admitted} using ${used} tokens (${(used / Math.max(1, admitted)).toFixed(1)} each), allowed ${allowed} (burst ${TOKENS_PER_MINUTE} + ${TOKENS_PER_MINUTE}/min × elapsed), 429: ${limited}`,
  );
  expect(other).toBe(0);
  // Meaningful only if the clients asked for more than the limit allows.
  expect(limited).toBeGreaterThan(0);
  expect(used).toBeLessThanOrEqual(allowed);
  // Held estimates were given back and used again: far more requests than the burst holds by estimate.
  expect(admitted).toBeGreaterThan(TOKENS_PER_MINUTE / 200);
  expect(used).toBeGreaterThanOrEqual(TOKENS_PER_MINUTE / 2);
}, 60_000);
