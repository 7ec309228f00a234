/**
 * A gateway pod whose Redis went away still stops within its grace period on SIGTERM, and says
 * what it could not write. A real gateway process (devkit/fleet), a real Redis stopped under it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fleet, startFleet } from '#devkit/fleet';
import { API_KEY, baseConfig, workflow } from '../harness/manifests.ts';

const GRACE_MS = 3000;

describe('SIGTERM with Redis down', () => {
  let fleet: Fleet;
  beforeAll(async () => {
    fleet = await startFleet({
      manifests: [
        ...baseConfig('http://127.0.0.1:9', ['gpt-4o-mini']),
        workflow('quick', { provider: 'oai', model: 'gpt-4o-mini', testMode: true }),
      ],
      gateways: 1,
      env: { SWITCHYARD_SHUTDOWN_GRACE_MS: String(GRACE_MS), LOG_LEVEL: 'info' },
    });
  }, 60_000);
  afterAll(() => fleet?.stop());

  it('serves without Redis, then stops within the grace period, naming the writes it could not make', async () => {
    const gw = fleet.gateways[0];
    if (!gw?.pid) throw new Error('gateway not running');
    await fleet.redis.stop();
    // Answered from the snapshot in memory; their request-log entries wait in the write buffer.
    let answered = 0;
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${gw.url}/v1/ai`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ workflow: 'quick', messages: [{ role: 'user', content: 'hi' }] }),
      });
      await res.arrayBuffer();
      if (res.status === 200) answered++;
    }
    const t0 = performance.now();
    const pid = gw.pid;
    process.kill(pid, 'SIGTERM');
    const exitedAfter = await Promise.race([
      gw.kill('SIGTERM').then(() => performance.now() - t0),
      new Promise<number>((r) => setTimeout(() => r(Number.POSITIVE_INFINITY), GRACE_MS + 10_000)),
    ]);
    const lines = gw.logs().map((l) => l.json ?? {});
    const closed = lines.find((l) => l.msg === 'gateway closed');
    const unflushed = lines.find((l) => typeof l.unflushed_settlements === 'number');
    const abandoned = (closed?.abandoned as string[] | undefined) ?? [];
    console.log(
      `[shutdown] Redis down: ${answered}/20 answered; SIGTERM → exit after ${exitedAfter.toFixed(0)} ms ` +
        `(grace ${GRACE_MS} ms); abandoned: ${abandoned.join(', ') || 'nothing'}; ` +
        `unwritten settlements reported: ${unflushed?.unflushed_settlements ?? 'none'}`,
    );
    expect(answered).toBe(20);
    expect(exitedAfter).toBeLessThan(GRACE_MS + 1000);
    expect(closed).toBeDefined();
    expect(lines.some((l) => String(l.msg).includes('grace period over'))).toBe(false);
    expect(unflushed?.unflushed_settlements).toBe(20);
  }, 60_000);
});
