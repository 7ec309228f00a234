import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY } from '../harness/manifests.ts';
import {
  type Ack,
  type AsyncGateway,
  ask,
  asyncConfig,
  CONSOLE_KEY,
  getJson,
  manualClock,
  OTHER_PROJECT_KEY,
  postJson,
  startAsyncGateway,
  waitState,
} from './harness.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('POST /v1/ai/async (memory state, embedded runner)', () => {
  let gw: AsyncGateway;
  const clock = manualClock();
  beforeAll(async () => {
    gw = await startAsyncGateway(asyncConfig(), { now: clock.now });
  });
  afterAll(() => gw?.close());

  it('acknowledges with every field, on both prefixes, then the job completes with the wrapped body', async () => {
    for (const prefix of ['/v1', '/api/v1']) {
      const r = await postJson(
        `${gw.url}${prefix}/ai/async`,
        API_KEY,
        ask('summary', { metadata: { k: 1 } }),
      );
      expect(r.status).toBe(202);
      const ack = r.body as Ack;
      expect(ack.status).toBe('pending');
      expect(typeof ack.message).toBe('string');
      expect(ack.channel_id).toMatch(UUID);
      expect(ack.session_id).toBeNull();
      expect(ack.ws_token).toMatch(/^wst_/);
      expect(ack.websocket_url).toBe(`${gw.url.replace('http', 'ws')}/socket/websocket`);
      expect(ack.websocket_channel).toBe(`ai_response:team.app:${ack.channel_id}`);
      const done = await waitState(gw.url, ack.channel_id, 'completed');
      expect(done.result.meta.status).toBe('success');
      expect(done.result.meta.workflow).toBe('summary');
      expect(done.result.data).not.toBeNull();
      expect(done.workflow).toBe('summary');
    }
  });

  it('ignores X-Forwarded-Proto/Host from a peer that is not a trusted proxy (none is configured)', async () => {
    const res = await fetch(`${gw.url}/v1/ai/async`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${API_KEY}`,
        'content-type': 'application/json',
        'x-forwarded-proto': 'https',
        'x-forwarded-host': 'ai.example.com',
      },
      body: JSON.stringify(ask('summary')),
    });
    expect(res.status).toBe(202);
    expect(((await res.json()) as Ack).websocket_url).toBe(
      `${gw.url.replace('http', 'ws')}/socket/websocket`,
    );
  });

  it('refuses at once what a sync request would refuse', async () => {
    expect((await postJson(`${gw.url}/v1/ai/async`, undefined, ask('summary'))).status).toBe(401);
    const unknown = await postJson(`${gw.url}/v1/ai/async`, API_KEY, ask('nope'));
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe('workflow_not_found');
    const bad = await postJson(`${gw.url}/v1/ai/async`, API_KEY, ask('summary', { temperature: 9 }));
    expect(bad.status).toBe(400);
    const stream = await postJson(`${gw.url}/v1/ai/async`, API_KEY, ask('summary', { stream: true }));
    expect(stream.status).toBe(400);
  });

  it('hides a channel from other projects (404) and unknown ids', async () => {
    const ack = (await postJson(`${gw.url}/v1/ai/async`, API_KEY, ask('summary'))).body as Ack;
    await waitState(gw.url, ack.channel_id, 'completed');
    expect((await getJson(`${gw.url}/v1/ai/async/${ack.channel_id}`, OTHER_PROJECT_KEY)).status).toBe(404);
    expect((await getJson(`${gw.url}/v1/ai/async/not-a-uuid`, API_KEY)).status).toBe(404);
    expect((await getJson(`${gw.url}/v1/ai/async/${crypto.randomUUID()}`, API_KEY)).status).toBe(404);
  });

  it('writes the job to the request log with its channel_id (surface async)', async () => {
    const ack = (await postJson(`${gw.url}/v1/ai/async`, API_KEY, ask('summary'))).body as Ack;
    await waitState(gw.url, ack.channel_id, 'completed');
    await gw.gateway.state.flush();
    const logs = await getJson(`${gw.url}/v1/request-logs?channel_id=${ack.channel_id}`, CONSOLE_KEY);
    const surfaces = (logs.body.data as { surface: string; status: string }[]).map((e) => e.surface).sort();
    expect(surfaces).toEqual(['async', 'native']);
    expect((logs.body.data as { status: string }[]).every((e) => e.status === 'success')).toBe(true);
  });
});
