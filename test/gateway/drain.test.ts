/**
 * A draining gateway (SIGTERM, after its pod left the Service's endpoints) still answers what
 * arrives on its open keep-alive connections, each answer with `Connection: close`, so the clients
 * move to other pods: no 503, no reset. test/e2e checks the same through a real rolling restart.
 */
import { Pool } from 'undici';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../harness/gateway.ts';
import { API_KEY, apiKey, project, secret, workflow } from '../harness/manifests.ts';

let gw: RunningGateway;

beforeAll(async () => {
  gw = await startGateway([
    project(),
    ...apiKey('main', API_KEY),
    secret('tm-cred', { apiKey: 'sk-unused' }),
    {
      apiVersion: 'switchyard.dev/v1alpha1',
      kind: 'Provider',
      metadata: { name: 'tm', namespace: 'team' },
      spec: {
        type: 'openai',
        credentials: { secretRef: { name: 'tm-cred', key: 'apiKey' } },
        models: [{ name: 'gpt-4o-mini', requestTypes: ['chat'] }],
      },
    },
    workflow('steady', { requestType: 'chat', provider: 'tm', model: 'gpt-4o-mini', testMode: true }),
  ]);
});

afterAll(async () => {
  await gw?.gateway.close(100).catch(() => {});
});

it('answers every request on its open connections while draining, each with Connection: close', async () => {
  const clients = 4;
  const pool = new Pool(gw.url, { connections: clients });
  const counts = { ok: 0, closeAnswers: 0, failed: 0 };
  const failures: string[] = [];
  let draining = false;
  const worker = async () => {
    for (;;) {
      try {
        const res = await pool.request({
          path: '/v1/chat/completions',
          method: 'POST',
          headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'steady', messages: [{ role: 'user', content: 'hi' }] }),
        });
        const body = await res.body.text();
        if (res.statusCode === 200) counts.ok++;
        else {
          counts.failed++;
          failures.push(`${res.statusCode} ${body.slice(0, 100)}`);
        }
        // The client's cue to go elsewhere: this connection is done.
        if (res.headers.connection === 'close') {
          counts.closeAnswers++;
          return;
        }
        if (!draining && counts.ok > 400) return; // never drained: fail below rather than hang
      } catch (e) {
        counts.failed++;
        failures.push(String((e as { code?: string }).code ?? e));
        return;
      }
    }
  };
  const running = Array.from({ length: clients }, worker);
  while (counts.ok < 20) await new Promise((r) => setTimeout(r, 5));
  draining = true;
  const closed = gw.gateway.close(5_000);
  const started = performance.now();
  await Promise.all(running);
  await closed;
  const ms = performance.now() - started;
  await pool.close();
  console.log(
    `drain under ${clients} keep-alive clients: ${counts.ok} ok, ${counts.failed} failed, ` +
      `${counts.closeAnswers} answers with Connection: close, closed in ${ms.toFixed(0)} ms`,
    failures.length ? failures : '',
  );
  expect(counts.failed).toBe(0);
  expect(counts.closeAnswers).toBe(clients);
  expect(ms).toBeLessThan(3_000);
});
