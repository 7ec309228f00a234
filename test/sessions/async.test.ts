/**
 * Sessions on the async surface: the acknowledgement carries the new session's id, the job runs
 * inside that session, a later async request continues it, and an unknown id is refused at once.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { postJson, waitState } from '../async/harness.ts';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { API_KEY, apiKey, project, workflow } from '../harness/manifests.ts';
import { ADMIN_KEY, getJson, type SessionView } from './helpers.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway([
    project(),
    ...apiKey('main', API_KEY),
    ...apiKey('admin', ADMIN_KEY, { scopes: ['ai', 'console'] }),
    ...[
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: 'cred', namespace: 'team' },
        stringData: { apiKey: 'x' },
      },
      {
        apiVersion: 'switchyard.dev/v1alpha1',
        kind: 'Provider',
        metadata: { name: 'oai', namespace: 'team' },
        spec: {
          type: 'openai',
          credentials: { secretRef: { name: 'cred', key: 'apiKey' } },
          models: [{ name: 'gpt-4o-mini', requestTypes: ['chat'] }],
        },
      },
    ],
    workflow('mem', {
      provider: 'oai',
      model: 'gpt-4o-mini',
      testMode: true,
      sessionMemory: { enabled: true },
    }),
  ]);
});
afterAll(async () => {
  await gw?.close();
});

interface Ack {
  channel_id: string;
  session_id: string | null;
}

it('the acknowledgement carries the new session id, and the job continues that session', async () => {
  const first = await postJson(`${gw.url}/v1/ai/async`, API_KEY, {
    workflow: 'mem',
    messages: [{ role: 'user', content: 'first async turn' }],
  });
  expect(first.status).toBe(202);
  const ack = first.body as unknown as Ack;
  expect(ack.session_id).toMatch(UUID);
  await waitState(gw.url, ack.channel_id, 'completed');
  const second = await postJson(`${gw.url}/v1/ai/async`, API_KEY, {
    workflow: 'mem',
    session_id: ack.session_id,
    messages: [{ role: 'user', content: 'second async turn' }],
  });
  expect((second.body as unknown as Ack).session_id).toBe(ack.session_id);
  await waitState(gw.url, (second.body as unknown as Ack).channel_id, 'completed');
  await gw.gateway.sessionWorkDone();
  const view = await getJson<SessionView>(gw.url, `/v1/sessions/${ack.session_id}`);
  expect(view.json.turns.filter((t) => t.role === 'user').map((t) => t.content)).toEqual([
    'first async turn',
    'second async turn',
  ]);
  expect(view.json.turns).toHaveLength(4);
});

it('an unknown session id is refused when the request is accepted, not later in the job', async () => {
  const r = await postJson(`${gw.url}/v1/ai/async`, API_KEY, {
    workflow: 'mem',
    session_id: '3f2b8c1e-9d4a-4f6b-8e2c-1a2b3c4d5e6f',
    messages: [{ role: 'user', content: 'x' }],
  });
  expect(r.status).toBe(422);
  expect(r.body).toMatchObject({ error: 'session_not_found', param: 'session_id' });
});
