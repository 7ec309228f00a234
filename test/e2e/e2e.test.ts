/**
 * The product as its users run it: the image built from the Dockerfile (make image-archive), both
 * charts installed with it on a real node (test/harness/node.ts: containerd, runc, kubelet,
 * kube-scheduler, kube-proxy) joined to the test control plane, a real Redis, examples/ applied,
 * and everything checked through the gateway Service's ClusterIP, as a client in the cluster
 * would reach it. Prints the figures: node and install times, leader handover, the rolling
 * restart's request counts, the mid-stream deletion outcome, idle memory of the pods.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningRedis, startRedis } from '#devkit/redis';
import { WEBHOOK_SECRET } from '../async/harness.ts';
import { buildChartTools, CHART, CRD_CHART, root, run } from '../charts/tools.ts';
import { type Cluster, startCluster } from '../harness/cluster.ts';
import { API_KEY, apiKey, PROJECT, project, provider, secret, workflow } from '../harness/manifests.ts';
import { type RunningNode, startNode } from '../harness/node.ts';
import { lockMachine, NODE_NETWORK, setUpNetwork, waitFor } from '../harness/node-network.ts';
import { type Simulator, startSimulator } from '../simulator/index.ts';
import { startReceiver } from '../webhooks/receiver.ts';
import { phoenixClient } from '../ws/phoenix-client.ts';
import { GATEWAY, NS, OPERATOR, RELEASE, releaseTools } from './release.ts';
import { readSse, steadyLoad } from './traffic.ts';

const IMAGE_ARCHIVE = join(root, '.cache/image/switchyard.tar');
const IMAGE_REPOSITORY = 'localhost/switchyard';
const IMAGE_TAG = 'dev';
/** The examples' key (examples/40-access.yaml). */
const EXAMPLE_KEY = 'sy_live_HEUADsAxMSNV8on9X3NkkU2lkBArrZ1v';
/** 40 chunks 250 ms apart from the simulator: a 10-second stream. */
const SLOW_MODEL = 'gpt-4o-mini-chunks-40-interval-250';

let release: (() => void) | undefined;
let network: (() => Promise<void>) | undefined;
let cluster: Cluster | undefined;
let node: RunningNode | undefined;
let redis: RunningRedis | undefined;
let sim: Simulator | undefined;
let receiver: Awaited<ReturnType<typeof startReceiver>> | undefined;
let dir: string;
/** http://<gateway Service ClusterIP>:8080 */
let gw = '';
let k: ReturnType<typeof releaseTools>;

const log = (msg: string) => console.log(`[e2e] ${msg}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const chat = (workflowName: string, content = 'Where is my order?') => ({
  model: workflowName,
  messages: [{ role: 'user', content }],
});

async function post(
  path: string,
  key: string,
  body: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(`${gw}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

beforeAll(async () => {
  const t0 = Date.now();
  const prereqs = await run('make', ['-s', '-C', root, 'node-build', 'image-archive', 'chart-tools'], {
    timeoutMs: 40 * 60_000,
  });
  if (prereqs.code !== 0)
    throw new Error(`make node-build image-archive failed:\n${prereqs.stdout}\n${prereqs.stderr}`);
  await buildChartTools();
  release = await lockMachine();
  dir = mkdtempSync(join(tmpdir(), 'sy-e2e-'));
  network = await setUpNetwork();
  const host = NODE_NETWORK.hostIp;
  [cluster, redis, sim, receiver] = await Promise.all([
    startCluster({ address: host, useKubeconfigEnv: false }),
    startRedis({ host }),
    startSimulator({ host }),
    startReceiver(WEBHOOK_SECRET, () => ({ status: 200 }), host),
  ]);
  k = releaseTools(cluster);
  const tNode = Date.now();
  node = await startNode(cluster, { images: [IMAGE_ARCHIVE] });
  log(`node ${node.name} Ready in ${node.readySeconds.toFixed(1)} s (containerd, image import, kubelet)`);

  const tInstall = Date.now();
  await k.helm(['install', 'switchyard-crds', CRD_CHART, '--wait']);
  const values = join(dir, 'values.yaml');
  writeFileSync(
    values,
    JSON.stringify({
      image: { repository: IMAGE_REPOSITORY, tag: IMAGE_TAG, pullPolicy: 'Never' },
      redis: { url: redis.url },
    }),
  );
  await k.helm(['install', RELEASE, CHART, '-n', NS, '--create-namespace', '-f', values]);
  await k.kubectl(['apply', '-R', '-f', join(root, 'examples')]);
  // The suite's own project: webhooks to the receiver on the host, a provider at the simulator.
  await k.kubectl(['create', 'namespace', 'team']);
  await k.apply([
    secret('hook-secret', { s0: WEBHOOK_SECRET }),
    project(PROJECT, {
      compatibleApi: { enabled: true },
      webhooks: [
        { url: receiver.url, secretRef: { name: 'hook-secret', key: 's0' }, events: ['ai.response'] },
      ],
      outboundFetch: { allowPrivateNetworks: true },
    }),
    ...apiKey('main', API_KEY),
    ...provider('sim', 'openai', sim.url, ['gpt-4o-mini', SLOW_MODEL], {
      timeouts: { connectMs: 2000, firstByteMs: 5000, totalMs: 60000 },
    }),
    workflow('steady', { requestType: 'chat', provider: 'sim', model: 'gpt-4o-mini' }),
    workflow('slow-stream', { requestType: 'chat', provider: 'sim', model: SLOW_MODEL }),
    workflow('summary', { requestType: 'chat', provider: 'sim', model: 'gpt-4o-mini' }),
  ]);
  // The chart's defaults otherwise: the HPA (2-10 pods) brings the gateway to its 2 replicas.
  await Promise.all([k.settled('operator', 2), k.settled('gateway', 2)]);
  const ip = (
    await k.kubectl(['get', 'service', GATEWAY, '-n', NS, '-o', 'jsonpath={.spec.clusterIP}'])
  ).trim();
  gw = `http://${ip}:8080`;
  log(
    `charts installed and both Deployments Ready ${((Date.now() - tInstall) / 1000).toFixed(1)} s after helm install; ` +
      `setup total ${((Date.now() - t0) / 1000).toFixed(1)} s (node ${((tInstall - tNode) / 1000).toFixed(1)} s)`,
  );
}, 45 * 60_000);

afterAll(async () => {
  await node?.stop().catch((e) => log(`node stop: ${String(e)}`));
  await Promise.all([cluster?.stop(), redis?.stop(), sim?.close(), receiver?.close()]);
  await network?.();
  release?.();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 180_000);

describe('both charts on a real node, with the image built here', () => {
  it('turns the examples Ready and answers both surfaces through the gateway Service', async () => {
    await waitFor(
      'every example Workflow Ready',
      async () => {
        const out = await k.kubectl(['get', 'workflows', '-n', 'acme', '-o', 'json']);
        const items = (
          JSON.parse(out) as { items: { status?: { conditions?: { type: string; status: string }[] } }[] }
        ).items;
        return (
          items.length > 0 &&
          items.every((w) => w.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
        );
      },
      60_000,
    );
    const native = await post('/v1/ai', EXAMPLE_KEY, {
      workflow: 'support-chat',
      format: 'wrapped',
      messages: [{ role: 'user', content: 'Where is my order?' }],
    });
    expect(native.status).toBe(200);
    expect(native.json.meta).toMatchObject({ status: 'success' });

    const client = new OpenAI({ baseURL: `${gw}/v1`, apiKey: EXAMPLE_KEY });
    const answer = await client.chat.completions.create({
      model: 'support-chat',
      messages: [{ role: 'user', content: 'Where is my order?' }],
    });
    expect(answer.choices[0]?.message.content).toBeTruthy();

    // The suite's project: its provider is the simulator on the host, reached from the pod.
    const own = new OpenAI({ baseURL: `${gw}/v1`, apiKey: API_KEY });
    const viaSim = await own.chat.completions.create({
      model: 'steady',
      messages: [{ role: 'user', content: 'Where is my order?' }],
    });
    expect(viaSim.choices[0]?.message.content).toMatch(/^Simulated openai\/gpt-4o-mini reply/);
    const models = await client.models.list();
    log(
      `native 200, compatible 200, /v1/models lists ${models.data.length} workflows of the examples' project`,
    );
  }, 120_000);

  it('delivers an async result over the WebSocket and as a verified webhook', async () => {
    const ack = await post('/v1/ai/async', API_KEY, {
      workflow: 'summary',
      messages: [{ role: 'user', content: 'Summarise: the quick brown fox.' }],
    });
    expect(ack.status).toBe(202);
    const a = ack.json as {
      channel_id: string;
      ws_token: string;
      websocket_url: string;
      websocket_channel: string;
    };
    expect(a.websocket_url).toMatch(/^ws:\/\//);
    const ws = phoenixClient(a.websocket_url.replace(/\/websocket$/, ''), a.ws_token);
    try {
      const joined = ws.join(a.websocket_channel);
      const result = (await waitFor('the response event', async () => joined.responses[0], 30_000)) as {
        meta: { status: string };
      };
      expect(result.meta.status).toBe('success');
      const hook = await waitFor(
        'the ai.response webhook',
        async () => receiver?.of('ai.response').find((d) => d.body.includes(a.channel_id)),
        30_000,
      );
      expect(hook.verified).toBe(true);
      log(`async: WebSocket response ${result.meta.status}, webhook ai.response verified=${hook.verified}`);
    } finally {
      ws.disconnect();
    }
  }, 90_000);

  it('runs as uid 10001 on a read-only root filesystem, the gateway on jemalloc; prints idle memory of the pods', async () => {
    const [g] = await k.settled('gateway', 2);
    const [o] = await k.settled('operator', 2);
    if (!g || !o) throw new Error('no pods');
    for (const [pod, container] of [
      [g.name, 'gateway'],
      [o.name, 'operator'],
    ] as const) {
      const id = await k.kubectl(['exec', '-n', NS, pod, '-c', container, '--', 'id', '-u']);
      expect(id.trim()).toBe('10001');
      const write = await cluster?.kubectl([
        'exec',
        '-n',
        NS,
        pod,
        '-c',
        container,
        '--',
        'node',
        '-e',
        "try { require('fs').writeFileSync('/app/probe', 'x'); console.log('written') } catch (e) { console.log(e.code) }",
      ]);
      expect(write?.stdout.trim()).toBe('EROFS');
      const tmp = await k.kubectl([
        'exec',
        '-n',
        NS,
        pod,
        '-c',
        container,
        '--',
        'node',
        '-e',
        "require('fs').writeFileSync('/tmp/probe', 'x'); console.log('ok')",
      ]);
      expect(tmp.trim()).toBe('ok');
    }
    // The chart preloads jemalloc (gateway.allocator) and the image installs it: the gateway has it
    // mapped, where a missing library would only have made ld.so complain on stderr.
    const maps = await k.kubectl(['exec', '-n', NS, g.name, '-c', 'gateway', '--', 'cat', '/proc/1/maps']);
    expect(maps).toContain('libjemalloc.so.2');
    // Idle: a few seconds without requests, then the kubelet's own figures (cAdvisor, the cgroup).
    await sleep(5_000);
    const summary = JSON.parse(
      await k.kubectl(['get', '--raw', `/api/v1/nodes/${node?.name}/proxy/stats/summary`]),
    ) as {
      pods: {
        podRef: { name: string; namespace: string };
        containers: { name: string; memory?: { rssBytes?: number; workingSetBytes?: number } }[];
      }[];
    };
    const mib = (b: number | undefined) => `${((b ?? 0) / 1048576).toFixed(1)} MiB`;
    const ours = summary.pods.filter((p) => p.podRef.namespace === NS);
    expect(ours.length).toBe(4);
    for (const p of ours)
      for (const c of p.containers) {
        expect(c.memory?.rssBytes).toBeGreaterThan(0);
        log(
          `idle ${c.name} pod ${p.podRef.name}: RSS ${mib(c.memory?.rssBytes)}, working set ${mib(c.memory?.workingSetBytes)}`,
        );
      }
  }, 120_000);

  it("hands the operator's Lease over when the leader's pod is deleted", async () => {
    await k.settled('operator', 2);
    const holder = async () =>
      (await k.kubectl(['get', 'lease', OPERATOR, '-n', NS, '-o', 'jsonpath={.spec.holderIdentity}'])).trim();
    const leader = await waitFor('a leader', async () => (await holder()) || undefined, 60_000);
    const names = (await k.pods('operator')).map((p) => p.name);
    expect(names).toContain(leader);
    const t = Date.now();
    await k.kubectl(['delete', 'pod', leader, '-n', NS, '--wait=false']);
    const next = await waitFor(
      'another operator pod to hold the Lease',
      async () => {
        const h = await holder();
        return h && h !== leader ? h : undefined;
      },
      60_000,
      100,
    );
    const handover = (Date.now() - t) / 1000;
    // The standby or the Deployment's replacement pod, whichever acquires first: a live operator pod.
    expect(next).not.toBe(leader);
    expect((await k.pods('operator')).map((p) => p.name)).toContain(next);
    // The new leader reconciles and publishes: a Workflow created now turns Ready and is served.
    await k.apply([
      workflow('after-handover', { requestType: 'chat', provider: 'sim', model: 'gpt-4o-mini' }),
    ]);
    const served = await waitFor(
      'the new workflow served through the gateway',
      async () => {
        const r = await post('/v1/chat/completions', API_KEY, chat('after-handover'));
        return r.status === 200 ? (Date.now() - t) / 1000 : undefined;
      },
      60_000,
      250,
    );
    log(
      `leader handover: ${leader} deleted -> ${next} holds the Lease after ${handover.toFixed(1)} s; a new Workflow served ${served.toFixed(1)} s after the deletion`,
    );
    await k.settled('operator', 2);
  }, 180_000);

  it('restarts the gateway Deployment under steady load without a failed request', async () => {
    const before = await k.settled('gateway', 2);
    const concurrency = 4;
    const t = Date.now();
    const load = steadyLoad(
      concurrency,
      () =>
        fetch(`${gw}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
          body: JSON.stringify(chat('steady')),
        }),
      (body) => body.includes('"choices"'),
    );
    await sleep(3_000);
    const beforeRestart = load.total();
    await k.kubectl(['rollout', 'restart', `deployment/${GATEWAY}`, '-n', NS]);
    const tRestart = Date.now();
    await k.rolledOut(GATEWAY);
    const rolled = (Date.now() - tRestart) / 1000;
    // Until the old pods are gone (preStop pause, then the drain), and a little after.
    const after = await k.settled('gateway', 2);
    const gone = (Date.now() - tRestart) / 1000;
    await sleep(3_000);
    const counts = await load.stop();
    const seconds = (Date.now() - t) / 1000;
    const total = counts.ok + counts.failed;
    log(
      `rolling restart under load (${concurrency} clients, keep-alive): ${total} requests in ${seconds.toFixed(1)} s ` +
        `(${(total / seconds).toFixed(0)}/s; ${beforeRestart} before the restart), ${counts.ok} ok, ${counts.failed} failed; ` +
        `rollout status done after ${rolled.toFixed(1)} s, old pods gone after ${gone.toFixed(1)} s` +
        (counts.failed ? `; errors: ${JSON.stringify(counts.errors)}` : ''),
    );
    expect(after.map((p) => p.name).some((n) => before.some((b) => b.name === n))).toBe(false);
    expect(counts.ok).toBeGreaterThan(50);
    expect(counts.failed).toBe(0);
  }, 300_000);

  it('finishes a stream whose pod is deleted mid-way, or ends it with an explicit error', async () => {
    const ps = await k.settled('gateway', 2);
    const t = Date.now();
    const res = await fetch(`${gw}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...chat('slow-stream'), stream: true }),
    });
    expect(res.status).toBe(200);
    // Which pod serves it: the one whose metrics count a request in flight.
    const serving = await waitFor(
      'the pod serving the stream',
      async () => {
        for (const p of ps) {
          const m = await (await fetch(`http://${p.ip}:9090/metrics`)).text();
          if (/^switchyard_requests_in_flight\{[^}]*\} [1-9]/m.test(m)) return p;
        }
        return undefined;
      },
      5_000,
      100,
    );
    let deletedAt = 0;
    const { events, error } = await readSse(res, async (n) => {
      // A few chunks in, the serving pod is deleted (preStop pause, then SIGTERM and the drain).
      if (deletedAt || n < 5) return;
      deletedAt = Date.now();
      await k.kubectl(['delete', 'pod', serving.name, '-n', NS, '--wait=false']);
    });
    const done = events.at(-1) === 'data: [DONE]';
    const errorEvent = events.some((e) => e.includes('"error"'));
    const pieces = events
      .filter((e) => e !== 'data: [DONE]')
      .map(
        (e) =>
          (JSON.parse(e.slice(6)) as { choices?: { delta?: { content?: string } }[] }).choices?.[0]?.delta
            ?.content ?? '',
      )
      .filter(Boolean);
    log(
      `mid-stream deletion: pod ${serving.name} deleted ${((deletedAt - t) / 1000).toFixed(1)} s into a 10 s stream; ` +
        `client got ${events.length} events over ${((Date.now() - t) / 1000).toFixed(1)} s, ` +
        (done
          ? `${pieces.length} of them content, ending with [DONE]`
          : errorEvent
            ? `ending with an error event: ${events.at(-1)?.slice(0, 300)}`
            : `ending with ${error || 'a bare close'}`),
    );
    expect(deletedAt).toBeGreaterThan(0);
    // Finished (every chunk, then [DONE]) or told: never a silent truncation.
    if (done) {
      expect(pieces.length).toBe(40);
      expect(pieces.join('')).toMatch(/^Simulated openai\/gpt-4o-mini-chunks-40-interval-250 reply/);
    } else expect(errorEvent || error !== '').toBe(true);
    await k.settled('gateway', 2);
  }, 180_000);

  it('rolls the pods on helm upgrade with a changed value', async () => {
    const gBefore = (await k.settled('gateway', 2)).map((p) => p.name);
    const oBefore = (await k.settled('operator', 2)).map((p) => p.name);
    const t = Date.now();
    await k.helm(['upgrade', RELEASE, CHART, '-n', NS, '--reuse-values', '--set', 'logLevel=debug']);
    await Promise.all([k.rolledOut(GATEWAY), k.rolledOut(OPERATOR)]);
    const [g, o] = await Promise.all([k.settled('gateway', 2), k.settled('operator', 2)]);
    log(
      `helm upgrade (logLevel=debug): both Deployments rolled in ${((Date.now() - t) / 1000).toFixed(1)} s`,
    );
    expect(g.some((p) => gBefore.includes(p.name))).toBe(false);
    expect(o.some((p) => oBefore.includes(p.name))).toBe(false);
    const env = await k.kubectl([
      'get',
      'pod',
      g[0]?.name ?? '',
      '-n',
      NS,
      '-o',
      'jsonpath={.spec.containers[0].env[?(@.name=="LOG_LEVEL")].value}',
    ]);
    expect(env).toBe('debug');
    const r = await post('/v1/chat/completions', API_KEY, chat('steady'));
    expect(r.status).toBe(200);
  }, 300_000);

  it('leaves the CRDs and the custom resources on helm uninstall', async () => {
    await k.helm(['uninstall', RELEASE, '-n', NS, '--wait']);
    await k.helm(['uninstall', 'switchyard-crds', '--wait']);
    const crds = (await k.kubectl(['get', 'crd', '-o', 'name']))
      .split('\n')
      .filter((l) => l.includes('switchyard.dev'));
    expect(crds.length).toBe(7);
    const workflows = (await k.kubectl(['get', 'workflows', '-A', '-o', 'name'])).split('\n').filter(Boolean);
    expect(workflows.length).toBeGreaterThan(3);
    await waitFor(
      'the release pods gone',
      async () => (await k.pods('gateway')).length + (await k.pods('operator')).length === 0,
      90_000,
      500,
    );
    log(`helm uninstall: ${crds.length} CRDs and ${workflows.length} Workflows kept, release pods gone`);
  }, 180_000);
});
