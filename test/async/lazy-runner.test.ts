/**
 * The lazy job runner on a real Redis: a pod that never queues a job keeps BullMQ unloaded while the
 * queues are empty, and still runs the jobs another pod left (its probe finds them); a pod that
 * queues a job starts its runner at once and runs it.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningRedis, startRedis } from '#devkit/redis';
import { BullJobRunner } from '#gateway/async/bullmq-runner';
import { LazyJobRunner } from '#gateway/async/lazy-runner';
import type { JobHandlers, JobRunner, RunJob } from '#gateway/async/runner';
import { connectStateRedis, type StateClient } from '#gateway/state/connect';
import { until } from './harness.ts';

const logger = pino({ level: 'silent' });
const runJob = (channelId: string): RunJob => ({
  channelId,
  projectId: 'lazy.test',
  keyHash: 'k',
  body: { workflow: 'w', messages: [{ role: 'user', content: 'hi' }] },
  acceptedAt: Date.now(),
});

describe('lazy job runner', () => {
  let redis: RunningRedis;
  let client: StateClient;
  const opened: JobRunner[] = [];
  beforeAll(async () => {
    redis = await startRedis();
    client = connectStateRedis({ url: redis.url });
    await until(async () => (client.status === 'ready' ? true : undefined), 20_000);
  });
  afterAll(async () => {
    for (const r of opened) await r.close();
    client?.disconnect();
    await redis?.stop();
  });

  const ran: string[] = [];
  const handlers: JobHandlers = {
    run: async (j) => {
      ran.push(j.channelId);
    },
    timer: async () => {},
    deliver: async () => {},
  };
  let created = 0;
  const lazy = () => {
    const r = new LazyJobRunner({
      redis: client,
      logger,
      probeMs: 200,
      create: async () => {
        created++;
        return new BullJobRunner(client, { logger, now: Date.now, concurrency: 2, lockMs: 2000 });
      },
    });
    opened.push(r);
    return r;
  };

  it('stays unloaded over empty queues, then runs a job another pod queued', async () => {
    const idle = lazy();
    idle.start(handlers);
    await new Promise((r) => setTimeout(r, 600)); // three probes
    expect(await idle.depth()).toEqual({ run: 0, timer: 0, webhook: 0 });
    expect(idle.active).toBe(false);
    expect(created).toBe(0);

    // Another pod queues a run job and never runs it (it has no workers: killed, say).
    const other = new BullJobRunner(client, { logger, now: Date.now, concurrency: 1, lockMs: 2000 });
    opened.push(other);
    await other.enqueueRun(runJob('left-behind'));
    await until(async () => (ran.includes('left-behind') ? true : undefined), 10_000);
    expect(idle.active).toBe(true);
    expect(created).toBe(1);
    console.log(
      `lazy runner: idle pod loaded its runner after a probe found a queued job; ran [${ran.join(', ')}]`,
    );
  });

  it('a pod that queues a job starts its runner with it and runs it', async () => {
    const before = created;
    const own = lazy();
    own.start(handlers);
    await own.enqueueRun(runJob('own'));
    expect(own.active).toBe(true);
    await until(async () => (ran.includes('own') ? true : undefined), 10_000);
    expect(created).toBe(before + 1);
  });
});
