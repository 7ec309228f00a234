import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY, provider, workflow } from '../harness/manifests.ts';
import { startReceiver } from '../webhooks/receiver.ts';
import {
  type Ack,
  type AsyncGateway,
  ask,
  asyncConfig,
  getJson,
  manualClock,
  OTHER_PROJECT_KEY,
  postJson,
  startAsyncGateway,
  until,
  WEBHOOK_SECRET,
  waitState,
} from './harness.ts';

const ALL_EVENTS = [
  'ai.response',
  'ai.error',
  'task.ai_generated',
  'task.completed',
  'callback.timeout',
  'budget.threshold',
];

/**
 * Backend-pipeline workflows end to end on the embedded runner with an injected clock: the
 * task.ai_generated webhook, the callback (merge, 404/409/410), the 5-minute timeout without
 * waiting 5 minutes, and test mode's simulated backend.
 */
describe('pipeline workflows (eventName): callback and timeout', () => {
  const clock = manualClock();
  let gw: AsyncGateway;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;

  beforeAll(async () => {
    receiver = await startReceiver(WEBHOOK_SECRET);
    gw = await startAsyncGateway(
      [
        ...asyncConfig({ webhooks: [{ url: receiver.url, events: ALL_EVENTS }], allowPrivate: true }),
        // A provider nothing listens for: the AI step of this pipeline workflow fails at once.
        ...provider('down', 'openai', 'http://127.0.0.1:9', ['gpt-4o-mini']),
        workflow('moderation-down', {
          requestType: 'chat',
          provider: 'down',
          model: 'gpt-4o-mini',
          eventName: 'content.moderate',
        }),
      ],
      {
        now: clock.now,
        async: { simulatedBackendMs: 3_600_000 },
      },
    );
  });
  afterAll(async () => {
    await gw?.close();
    await receiver?.close();
  });

  const accept = async (): Promise<Ack> =>
    (await postJson(`${gw.url}/v1/ai/async`, API_KEY, ask('moderation'))).body as Ack;
  const webhookFor = (event: string, channelId: string) =>
    until(async () => receiver.of(event).find((d) => d.json.channel_id === channelId));

  it('sends task.ai_generated, merges the callback over ai_response, refuses a second (409) and a foreign key (404)', async () => {
    const ack = await accept();
    const waiting = await waitState(gw.url, ack.channel_id, 'awaiting_callback');
    expect(waiting.result).toBeNull();
    const generated = await webhookFor('task.ai_generated', ack.channel_id);
    expect(generated.verified).toBe(true);
    expect(generated.json).toMatchObject({
      type: 'task.ai_generated',
      event: 'content.moderate',
      channel_id: ack.channel_id,
      callback_required: true,
    });
    expect(generated.json.callback_url).toBe(`${gw.url}/v1/callback/${ack.channel_id}`);
    const aiData = (generated.json.ai_response as { data: unknown }).data;
    expect(aiData).not.toBeNull();

    const foreign = await postJson(String(generated.json.callback_url), OTHER_PROJECT_KEY, {
      data: { x: 1 },
    });
    expect(foreign.status).toBe(404);
    const bad = await postJson(String(generated.json.callback_url), API_KEY, { data: 'nope' });
    expect(bad.status).toBe(400);

    const cb = await postJson(String(generated.json.callback_url), API_KEY, {
      data: { id: 'backend-42', approved: true },
      task_id: 'task-7',
      metadata: { reviewer: 'bot' },
    });
    expect(cb.status).toBe(200);
    expect(cb.body).toEqual({ status: 'completed', channel_id: ack.channel_id, task_id: 'task-7' });
    const done = await waitState(gw.url, ack.channel_id, 'completed');
    // Test-mode chat data is an object: the backend's fields go over it.
    expect(typeof aiData).toBe('object');
    expect(done.result.data).toEqual({ ...(aiData as object), id: 'backend-42', approved: true });
    expect(done.result.meta.status).toBe('success');

    const completed = await webhookFor('task.completed', ack.channel_id);
    expect(completed.verified).toBe(true);
    expect(completed.json).toMatchObject({
      task_id: 'task-7',
      metadata: { reviewer: 'bot' },
      status: 'success',
    });

    const second = await postJson(`${gw.url}/api/v1/callback/${ack.channel_id}`, API_KEY, {
      data: { id: 'again' },
    });
    expect(second.status).toBe(409);
    expect(second.body.error).toBe('callback_conflict');
    expect(receiver.of('ai.response').filter((d) => d.json.channel_id === ack.channel_id)).toHaveLength(0);

    // Each callback is a request-log entry of type `callback` on the channel: accepted and refused.
    await gw.gateway.state.flush();
    const logs = await gw.gateway.state.queryLogs('team.app', {
      channel_id: ack.channel_id,
      type: 'callback',
      limit: 10,
    });
    expect(logs.entries.map((e) => e.http_status).sort()).toEqual([200, 400, 409]);
  });

  it('an AI step that fails sends ai.error: the backend is never asked, no task event is sent', async () => {
    const ack = (await postJson(`${gw.url}/v1/ai/async`, API_KEY, ask('moderation-down'))).body as Ack;
    const failed = await waitState(gw.url, ack.channel_id, 'failed');
    expect(failed.result.meta.status).toBe('error');
    const hook = await webhookFor('ai.error', ack.channel_id);
    expect(hook.verified).toBe(true);
    expect(hook.json).toMatchObject({
      type: 'ai.error',
      event: 'content.moderate',
      channel_id: ack.channel_id,
      status: 'error',
      workflow: 'moderation-down',
    });
    expect(hook.json.error).toBeTruthy();
    const others = ['task.ai_generated', 'task.completed', 'ai.response'].flatMap((e) =>
      receiver.of(e).filter((d) => d.json.channel_id === ack.channel_id),
    );
    expect(others).toEqual([]);
  });

  it('times out after 5 minutes of injected time: callback_timeout delivered, a late callback is 410', async () => {
    const ack = await accept();
    await waitState(gw.url, ack.channel_id, 'awaiting_callback');
    clock.advance(299_000);
    await new Promise((r) => setTimeout(r, 80));
    expect((await getJson(`${gw.url}/v1/ai/async/${ack.channel_id}`, API_KEY)).body.status).toBe(
      'awaiting_callback',
    );
    clock.advance(2_000);
    const timedOut = await waitState(gw.url, ack.channel_id, 'timed_out');
    expect(timedOut.result.meta.status).toBe('error');
    expect(timedOut.result.error.code).toBe('callback_timeout');
    expect(timedOut.result.data).toBeNull();
    const hook = await webhookFor('callback.timeout', ack.channel_id);
    expect(hook.json).toMatchObject({
      type: 'callback.timeout',
      status: 'error',
      channel_id: ack.channel_id,
    });
    const late = await postJson(`${gw.url}/v1/callback/${ack.channel_id}`, API_KEY, { data: { id: 'late' } });
    expect(late.status).toBe(410);
    expect(late.body.error).toBe('callback_window_closed');
  });

  it('a callback after the deadline but before the timer fired is 410 and delivers the timeout', async () => {
    const ack = await accept();
    await waitState(gw.url, ack.channel_id, 'awaiting_callback');
    clock.advance(300_001);
    const late = await postJson(`${gw.url}/v1/callback/${ack.channel_id}`, API_KEY, { data: { id: 'late' } });
    expect(late.status).toBe(410);
    const timedOut = await waitState(gw.url, ack.channel_id, 'timed_out');
    expect(timedOut.result.error.code).toBe('callback_timeout');
    await new Promise((r) => setTimeout(r, 80));
    expect(receiver.of('callback.timeout').filter((d) => d.json.channel_id === ack.channel_id)).toHaveLength(
      1,
    );
  });
});

describe('events other features emit (budget.threshold)', () => {
  let gw: AsyncGateway;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  beforeAll(async () => {
    receiver = await startReceiver(WEBHOOK_SECRET);
    gw = await startAsyncGateway(
      asyncConfig({ webhooks: [{ url: receiver.url, events: ALL_EVENTS }], allowPrivate: true }),
    );
  });
  afterAll(async () => {
    await gw?.close();
    await receiver?.close();
  });

  it('delivers through the same dispatcher, once per dedupe key, only to subscribed projects', async () => {
    const hooks = gw.gateway.webhooks;
    const payload = { cap_id: 'monthly', threshold_percent: 80, spent_usd: '40', limit_usd: '50' };
    expect(await hooks.emitFor('team.app', 'budget.threshold', payload, 'monthly:2026-11:80')).toBe(1);
    expect(await hooks.emitFor('team.app', 'budget.threshold', payload, 'monthly:2026-11:80')).toBe(1);
    expect(await hooks.emitFor('team.other', 'budget.threshold', payload, 'x')).toBe(0);
    expect(await hooks.emitFor('team.nope', 'budget.threshold', payload, 'x')).toBe(0);
    const d = await until(async () => receiver.of('budget.threshold')[0]);
    expect(d.verified).toBe(true);
    expect(d.json).toMatchObject({ type: 'budget.threshold', ...payload });
    // After delivery too: the same key queues nothing new.
    expect(await hooks.emitFor('team.app', 'budget.threshold', payload, 'monthly:2026-11:80')).toBe(1);
    await new Promise((r) => setTimeout(r, 100));
    expect(receiver.of('budget.threshold')).toHaveLength(1);
  });
});

describe('test-mode pipeline workflow: the simulated backend', () => {
  const clock = manualClock();
  let gw: AsyncGateway;
  beforeAll(async () => {
    gw = await startAsyncGateway(asyncConfig(), { now: clock.now });
  });
  afterAll(() => gw?.close());

  it('answers after ~1.5 s with an injected id merged over ai_response', async () => {
    const ack = (await postJson(`${gw.url}/v1/ai/async`, API_KEY, ask('moderation'))).body as Ack;
    await waitState(gw.url, ack.channel_id, 'awaiting_callback');
    clock.advance(1_500);
    const done = await waitState(gw.url, ack.channel_id, 'completed');
    expect(done.result.data.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Object.keys(done.result.data).length).toBeGreaterThan(1);
  });
});
