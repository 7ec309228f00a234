/**
 * The operator against a real API server and a real Redis: examples → snapshot → gateway, live
 * changes, status reasons, key revocation and rotation, 410 relists, spend status, no status loops.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { periodWindow, REDIS_KEYS, SPEND_KEYS, WEBHOOK_STATE_KEYS } from '#contract';
import type { RunningOperator } from '#operator/operator';
import {
  ask,
  type Env,
  EXAMPLE_KEY,
  exampleCounts,
  type FollowingGateway,
  metricValue,
  ready,
  root,
  sleep,
  startEnv,
  type WithStatus,
  waitFor,
} from './helpers.ts';

let env: Env;
let op: RunningOperator;
let gwA: FollowingGateway;
let gwB: FollowingGateway;

beforeAll(async () => {
  env = await startEnv();
  // Gateways first: they must report not-ready until the operator publishes the first snapshot.
  gwA = await env.gateway();
  gwB = await env.gateway();
  expect((await fetch(`${gwA.metricsUrl}/readyz`)).status).toBe(503);
  op = await env.operator();
  await env.kubectl(['apply', '-R', '-f', `${root}/examples/`]);
}, 600_000);

afterAll(async () => {
  await env?.stop();
});

const EXAMPLES = exampleCounts();
const KINDS = ['projects', 'providers', 'workflows', 'apikeys', 'spendcaps'] as const;

describe('examples', () => {
  it('publish a snapshot in which every object is Ready, and a gateway serves the example workflow', async () => {
    const snap = await waitFor('a snapshot with the example workflows', async () => {
      const s = await env.snapshot();
      const complete =
        s &&
        Object.keys(s.projects['acme.storefront']?.workflows ?? {}).length === EXAMPLES.workflows &&
        Object.keys(s.apiKeys).length === EXAMPLES.allApiKeys &&
        s.projects['acme.storefront']?.spendCaps.length === EXAMPLES.spendCaps;
      return complete ? s : undefined;
    });
    expect(Object.keys(snap.apiKeys)).toHaveLength(EXAMPLES.allApiKeys);
    expect(JSON.stringify(snap)).not.toContain('sk-example-replace-me'); // credentials are sealed
    expect(JSON.stringify(snap)).not.toContain(EXAMPLE_KEY); // keys are hashed
    for (const kind of KINDS) {
      await waitFor(`every ${kind} Ready`, async () => {
        const list = JSON.parse(await env.kubectl(['get', kind, '-n', 'acme', '-o', 'json'])) as {
          items: WithStatus[];
        };
        return list.items.length > 0 && list.items.every((o) => ready(o)?.status === 'True')
          ? true
          : undefined;
      });
    }
    const project = await env.get<WithStatus>('project', 'acme', 'storefront');
    expect(project.status).toMatchObject({
      projectId: 'acme.storefront',
      workflows: EXAMPLES.workflows,
      apiKeys: EXAMPLES.apiKeys,
    });
    expect(ready(project)?.observedGeneration).toBe(project.metadata.generation);
    const wf = await env.get<WithStatus>('workflow', 'acme', 'support-chat');
    expect(wf.status).toMatchObject({ apiName: 'support-chat', route: 'openai/gpt-4o-mini', backups: 1 });
    const prov = await env.get<WithStatus>('provider', 'acme', 'openai');
    expect(prov.status).toMatchObject({ models: 4 });
    const key = await env.get<WithStatus>('apikey', 'acme', 'storefront-backend');
    expect(key.status).toMatchObject({ keyPrefix: EXAMPLE_KEY.slice(0, 12), secretName: 'storefront-key' });

    await waitFor('gateway ready', async () => (await fetch(`${gwA.metricsUrl}/readyz`)).status === 200);
    const res = await ask(gwA.url, EXAMPLE_KEY, 'support-chat');
    expect(res.status).toBe(200);
    expect(res.model).toBe('gpt-4o-mini');

    // Events on the first Ready transition.
    const events = await env.kubectl(['get', 'events', '-n', 'acme', '-o', 'json']);
    expect(events).toContain('"reason": "Valid"');
    expect(events).not.toContain(EXAMPLE_KEY);
    expect(await metricValue(op.metricsUrl, 'switchyard_operator_leader')).toBe(1);
    expect(
      await metricValue(op.metricsUrl, 'switchyard_operator_reconciles_total', { kind: 'Snapshot' }),
    ).toBeGreaterThan(0);
  });

  it('a model change with kubectl apply reaches a running gateway within 2 s', async () => {
    const yaml = (await env.kubectl(['get', 'workflow', '-n', 'acme', 'support-chat', '-o', 'yaml'])).replace(
      'model: gpt-4o-mini',
      'model: gpt-4o',
    );
    const t0 = Date.now();
    await env.apply(yaml.replace(/\n {2}resourceVersion: .*\n/, '\n'));
    await waitFor(
      'the new model',
      async () => (await ask(gwA.url, EXAMPLE_KEY, 'support-chat')).model === 'gpt-4o',
      2000,
      25,
    );
    const ms = Date.now() - t0;
    console.log(`[operator e2e] model change visible at the gateway after ${ms} ms`);
    expect(ms).toBeLessThan(2000);
  });
});

describe('status reasons', () => {
  it('a workflow naming an unknown provider is Ready=False ProviderNotFound; fixing it makes it Ready', async () => {
    const wf = (provider: string) => `
apiVersion: switchyard.dev/v1alpha1
kind: Workflow
metadata: {name: lost, namespace: acme}
spec: {projectRef: {name: storefront}, provider: ${provider}, model: gpt-4o-mini, testMode: true}
`;
    await env.apply(wf('nosuch'));
    const bad = await waitFor('ProviderNotFound', async () => {
      const o = await env.get<WithStatus>('workflow', 'acme', 'lost');
      return ready(o)?.reason === 'ProviderNotFound' ? o : undefined;
    });
    expect(ready(bad)?.status).toBe('False');
    expect(ready(bad)?.message).toContain('Provider "nosuch" not found in namespace acme');
    const describe = await env.kubectl(['describe', 'workflow', '-n', 'acme', 'lost']);
    expect(describe).toContain('ProviderNotFound');
    const printed = await env.kubectl(['get', 'workflow', '-n', 'acme', 'lost', '-o', 'wide']);
    expect(printed).toContain('ProviderNotFound');

    await env.apply(wf('openai'));
    await waitFor('Ready after the fix', async () => {
      const o = await env.get<WithStatus>('workflow', 'acme', 'lost');
      return ready(o)?.status === 'True' && ready(o)?.observedGeneration === o.metadata.generation;
    });
    await waitFor('served', async () => (await ask(gwA.url, EXAMPLE_KEY, 'lost')).status === 200);
  });

  it('a model that does not support the request type is ModelDoesNotSupportRequestType', async () => {
    await env.apply(`
apiVersion: switchyard.dev/v1alpha1
kind: Workflow
metadata: {name: wrong-type, namespace: acme}
spec: {projectRef: {name: storefront}, requestType: embedding, provider: openai, model: gpt-4o, testMode: true}
`);
    await waitFor('ModelDoesNotSupportRequestType', async () => {
      const o = await env.get<WithStatus>('workflow', 'acme', 'wrong-type');
      return ready(o)?.reason === 'ModelDoesNotSupportRequestType';
    });
  });
});

describe('API keys', () => {
  it('a revoked key is refused by every gateway within 2 s', async () => {
    await env.apply(`
apiVersion: v1
kind: Secret
metadata: {name: revoke-me, namespace: acme}
stringData: {apiKey: sy_live_RevokeMeKey0123456789abcdefghij}
---
apiVersion: switchyard.dev/v1alpha1
kind: ApiKey
metadata: {name: revoke-me, namespace: acme}
spec: {projectRef: {name: storefront}, secretRef: {name: revoke-me}}
`);
    const KEY = 'sy_live_RevokeMeKey0123456789abcdefghij';
    for (const g of [gwA, gwB])
      await waitFor('key works', async () => (await ask(g.url, KEY, 'support-chat')).status === 200);
    const t0 = Date.now();
    await env.kubectl([
      'patch',
      'apikey',
      '-n',
      'acme',
      'revoke-me',
      '--type=merge',
      '-p',
      '{"spec":{"revoked":true}}',
    ]);
    await Promise.all(
      [gwA, gwB].map((g) =>
        waitFor('refused', async () => (await ask(g.url, KEY, 'support-chat')).status === 401, 2000, 25),
      ),
    );
    console.log(`[operator e2e] revocation refused by both gateways after ${Date.now() - t0} ms`);
    await waitFor(
      'KeyRevoked',
      async () => ready(await env.get<WithStatus>('apikey', 'acme', 'revoke-me'))?.reason === 'KeyRevoked',
    );
  });

  it('a generated key is created in an owned Secret; rotation keeps both keys for the grace period', async () => {
    await env.apply(`
apiVersion: switchyard.dev/v1alpha1
kind: ApiKey
metadata: {name: gen, namespace: acme}
spec: {projectRef: {name: storefront}, rotation: {generation: 0, gracePeriodSeconds: 4}}
`);
    const readKey = async (field = 'apiKey') => {
      const s = await env.get<{
        data?: Record<string, string>;
        metadata: { ownerReferences?: { kind: string; controller?: boolean }[] };
      }>('secret', 'acme', 'gen-apikey');
      const v = s.data?.[field];
      return { value: v ? Buffer.from(v, 'base64').toString() : undefined, secret: s };
    };
    const first = await waitFor('generated Secret', async () => {
      const r = await readKey();
      return r.value ? r : undefined;
    });
    expect(first.value).toMatch(/^sy_live_[0-9A-Za-z]{49}$/);
    expect(first.secret.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'ApiKey', controller: true });
    const oldKey = first.value ?? '';
    await waitFor(
      'generated key works',
      async () => (await ask(gwA.url, oldKey, 'support-chat')).status === 200,
    );
    const st = await env.get<WithStatus>('apikey', 'acme', 'gen');
    expect(st.status).toMatchObject({ keyPrefix: oldKey.slice(0, 12), secretName: 'gen-apikey' });

    await env.kubectl([
      'patch',
      'apikey',
      '-n',
      'acme',
      'gen',
      '--type=merge',
      '-p',
      '{"spec":{"rotation":{"generation":1}}}',
    ]);
    const newKey = await waitFor('rotated key', async () => {
      const v = (await readKey()).value;
      return v && v !== oldKey ? v : undefined;
    });
    expect((await readKey('previousApiKey')).value).toBe(oldKey);
    await waitFor('new key works', async () => (await ask(gwA.url, newKey, 'support-chat')).status === 200);
    expect((await ask(gwA.url, oldKey, 'support-chat')).status).toBe(200); // grace period
    const rotated = await env.get<WithStatus>('apikey', 'acme', 'gen');
    expect(rotated.status?.previousKeyValidUntil).toBeDefined();
    // After the grace period the old key stops; the new one keeps working.
    await waitFor(
      'old key refused',
      async () => (await ask(gwA.url, oldKey, 'support-chat')).status === 401,
      10_000,
      100,
    );
    expect((await ask(gwA.url, newKey, 'support-chat')).status).toBe(200);
    // The snapshot itself drops it too (the operator re-reconciled at the end of the grace period).
    await waitFor(
      'previous key gone from Secret',
      async () => (await readKey('previousApiKey')).value === undefined,
      5000,
    );
  });

  it('an expiring key stops at its expiry without any change being applied', async () => {
    const at = new Date(Date.now() + 4000).toISOString();
    await env.apply(`
apiVersion: v1
kind: Secret
metadata: {name: expiring, namespace: acme}
stringData: {apiKey: sy_live_ExpiringKey0123456789abcdefghijk}
---
apiVersion: switchyard.dev/v1alpha1
kind: ApiKey
metadata: {name: expiring, namespace: acme}
spec: {projectRef: {name: storefront}, secretRef: {name: expiring}, expiresAt: "${at}"}
`);
    await waitFor(
      'KeyExpired status',
      async () => ready(await env.get<WithStatus>('apikey', 'acme', 'expiring'))?.reason === 'KeyExpired',
      10_000,
      200,
    );
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(at));
  });
});

describe('watch robustness', () => {
  it('a watch restarted from a too-old resourceVersion (410 Gone) relists and misses nothing', async () => {
    const inf = op.informers.Workflow;
    const listsBefore = inf.lists;
    // Stop listening (the watch points at a resourceVersion the server no longer has), change an
    // object meanwhile, then let the watch resume: the server answers 410 and the informer relists.
    inf.restartWatchFrom('1');
    await env.kubectl([
      'patch',
      'workflow',
      '-n',
      'acme',
      'product-embeddings',
      '--type=merge',
      '-p',
      '{"spec":{"description":"after 410"}}',
    ]);
    await waitFor('relist after 410', async () => inf.lists > listsBefore, 20_000);
    await waitFor('change published', async () => {
      const s = await env.snapshot();
      return s?.projects['acme.storefront']?.workflows['product-embeddings']?.description === 'after 410';
    });
  });
});

describe('spend caps', () => {
  it('status.spentUsd, state and resetAt follow what gateways record in Redis', async () => {
    const now = new Date();
    const w = periodWindow('monthly', now);
    await env.redisClient.incrby(SPEND_KEYS.project('acme.storefront', 'monthly', w.start), 41_000_000); // $41 of $50
    const cap = await waitFor(
      'spend status',
      async () => {
        const o = await env.get<WithStatus>('spendcap', 'acme', 'storefront-monthly');
        return o.status?.state === 'warning' ? o : undefined;
      },
      15_000,
      250,
    );
    expect(cap.status).toMatchObject({ spentUsd: '41.00', resetAt: w.end.toISOString() });
    await env.redisClient.incrby(SPEND_KEYS.project('acme.storefront', 'monthly', w.start), 10_000_000);
    await waitFor(
      'exceeded',
      async () =>
        (await env.get<WithStatus>('spendcap', 'acme', 'storefront-monthly')).status?.state === 'exceeded',
      15_000,
      250,
    );
  });
});

describe('webhook health', () => {
  it('Project status reports endpoints disabled by 410 and dead letters that gateways recorded', async () => {
    await env.apply(`apiVersion: v1
kind: Secret
metadata: {name: hooks-secret, namespace: acme}
stringData: {secret: whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw}
---
apiVersion: switchyard.dev/v1alpha1
kind: Project
metadata: {name: hooks, namespace: acme}
spec:
  webhooks:
    - url: https://hooks.example.com/switchyard
      secretRef: {name: hooks-secret, key: secret}
      events: [ai.response]
`);
    const healthy = await waitFor(
      'WebhooksDelivering=True',
      async () => {
        const o = await env.get<WithStatus>('project', 'acme', 'hooks');
        return o.status?.conditions?.find((c) => c.type === 'WebhooksDelivering') ? o : undefined;
      },
      15_000,
      250,
    );
    expect(healthy.status).toMatchObject({ webhooks: { disabledEndpoints: [], deadLetters: 0 } });
    // What a gateway writes after a receiver answered 410 and after deliveries ran out of retries.
    await env.redisClient.hset(
      WEBHOOK_STATE_KEYS.disabled('acme.hooks'),
      'https://hooks.example.com/switchyard',
      '1',
    );
    await env.redisClient.zadd(WEBHOOK_STATE_KEYS.deadIndex('acme.hooks'), 1, 'd1', 2, 'd2');
    const sick = await waitFor(
      'WebhooksDelivering=False',
      async () => {
        const o = await env.get<WithStatus>('project', 'acme', 'hooks');
        const c = o.status?.conditions?.find((x) => x.type === 'WebhooksDelivering');
        return c?.status === 'False' ? { o, c } : undefined;
      },
      15_000,
      250,
    );
    expect(sick.o.status).toMatchObject({
      webhooks: { disabledEndpoints: ['https://hooks.example.com/switchyard'], deadLetters: 2 },
    });
    expect(sick.c).toMatchObject({ reason: 'EndpointDisabled' });
    expect(sick.c.message).toContain('2 dead letters');
    expect(ready(sick.o)?.status).toBe('True');
  });
});

/** The measurement itself: how long nothing may happen in a cluster nobody touches (resync included). */
const QUIET_WINDOW_MS = 5000;

describe('no reconcile loops', () => {
  it('status writes do not trigger new reconciles: a quiet cluster stays quiet', async () => {
    // Let the events of the previous tests settle: wait until reconciles and status writes stop moving.
    let last = '';
    await waitFor(
      'settled',
      async () => {
        const now = `${op.controller.snapshotReconciles}/${await metricValue(op.metricsUrl, 'switchyard_operator_status_writes_total')}`;
        const same = now === last;
        last = now;
        return same;
      },
      15_000,
      750,
    );
    const reconciles = op.controller.snapshotReconciles;
    const writes = await metricValue(op.metricsUrl, 'switchyard_operator_status_writes_total');
    const version = await env.redisClient.get(REDIS_KEYS.current);
    await sleep(QUIET_WINDOW_MS);
    const reconcilesAfter = op.controller.snapshotReconciles - reconciles;
    const writesAfter =
      (await metricValue(op.metricsUrl, 'switchyard_operator_status_writes_total')) - writes;
    console.log(
      `[operator e2e] quiet 5 s: ${reconcilesAfter} snapshot reconciles, ${writesAfter} status writes`,
    );
    expect(reconcilesAfter).toBe(0);
    expect(writesAfter).toBe(0);
    expect(await env.redisClient.get(REDIS_KEYS.current)).toBe(version);
  });
});
