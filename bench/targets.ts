import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { MemoryCgroup } from './lib/cgroup.ts';
import { publishConfig, type Variant, writeConfig } from './lib/config.ts';
import { freePort, type Probe, type Proc, startProc, waitFor200 } from './lib/proc.ts';

/** What the bench measures: a simulator per upstream delay, and the processes in front of it. */

const ROOT = resolve(import.meta.dirname, '..');
const NODE = process.execPath;
const NODE_FLAGS = ['--disable-warning=ExperimentalWarning'];
export const SIM_API_KEY = 'sk-bench-simulator';
export const GATEWAY_KEY = 'sy_live_BenchmarkKeyOnlyForLoopback01';
const PROMPT = 'Say hello to the benchmark, briefly.';

export interface Sim {
  delayMs: number;
  origin: string;
  proc: Proc;
  startupMs: number;
}

export interface RequestSpec {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** One measured row: a surface of a target process. */
export interface Surface {
  name: string;
  request(sim: Sim, stream: boolean): RequestSpec;
}

export interface Target {
  name: string;
  pid: number;
  startupMs: number;
  surfaces: Surface[];
  stop(): Promise<void>;
}

export type TargetName = 'direct' | 'passthrough' | 'stateless' | 'gateway' | 'portkey';
export const TARGET_NAMES: TargetName[] = ['direct', 'passthrough', 'stateless', 'gateway', 'portkey'];

function openaiBody(model: string, stream: boolean): string {
  return JSON.stringify({
    model,
    messages: [{ role: 'user', content: PROMPT }],
    ...(stream ? { stream: true } : {}),
  });
}
const json = { 'content-type': 'application/json' };
const simAuth = { ...json, authorization: `Bearer ${SIM_API_KEY}` };

export async function startSim(delayMs: number, chunks: number, intervalMs: number): Promise<Sim> {
  const port = await freePort();
  const proc = startProc(`simulator (${delayMs} ms)`, NODE, [
    ...NODE_FLAGS,
    join(ROOT, 'test/simulator/main.ts'),
    '--port',
    String(port),
    '--delay-ms',
    String(delayMs),
    '--stream-chunks',
    String(chunks),
    '--chunk-interval-ms',
    String(intervalMs),
    '--no-validate',
  ]);
  const origin = `http://127.0.0.1:${port}`;
  const probe: Probe = {
    url: `${origin}/v1/chat/completions`,
    method: 'POST',
    headers: simAuth,
    body: openaiBody('gpt-4o-mini', false),
  };
  const startupMs = await waitFor200(proc, probe);
  return { delayMs, origin, proc, startupMs };
}

const directSurface: Surface = {
  name: 'direct',
  request: (sim, stream) => ({
    url: `${sim.origin}/v1/chat/completions`,
    headers: simAuth,
    body: openaiBody('gpt-4o-mini', stream),
  }),
};

/** The floor: the simulator itself (its process is the measured one). */
export function directTarget(sims: Sim[]): Target {
  const first = sims[0]!;
  return {
    name: 'direct',
    pid: first.proc.pid,
    startupMs: first.startupMs,
    surfaces: [directSurface],
    stop: async () => {},
  };
}

async function spawnTarget(
  name: string,
  args: string[],
  env: Record<string, string>,
  probe: RequestSpec,
  surfaces: Surface[],
  cgroup?: MemoryCgroup,
): Promise<Target> {
  const { cmd, args: argv } = cgroup ? cgroup.wrap(NODE, args) : { cmd: NODE, args };
  const proc = startProc(name, cmd, argv, { env, cwd: ROOT });
  const startupMs = await waitFor200(proc, { ...probe, method: 'POST' });
  return { name, pid: proc.pid, startupMs, surfaces, stop: () => proc.stop() };
}

export async function passthroughTarget(sims: Sim[]): Promise<Target> {
  const port = await freePort();
  const first = sims[0]!;
  const surface: Surface = {
    name: 'passthrough',
    request: (sim, stream) => ({
      url: `http://127.0.0.1:${port}/v1/chat/completions`,
      headers: { ...simAuth, 'x-bench-upstream': sim.origin },
      body: openaiBody('gpt-4o-mini', stream),
    }),
  };
  return spawnTarget(
    'passthrough',
    [...NODE_FLAGS, join(ROOT, 'bench/passthrough.ts'), '--port', String(port), '--upstream', first.origin],
    {},
    surface.request(first, false),
    [surface],
  );
}

const workflowName = (sim: Pick<Sim, 'delayMs'>) => `bench-chat-d${sim.delayMs}`;
const cachedWorkflowName = (sim: Pick<Sim, 'delayMs'>) => `bench-cached-d${sim.delayMs}`;
const guardedWorkflowName = (sim: Pick<Sim, 'delayMs'>) => `bench-guarded-d${sim.delayMs}`;

/**
 * One Provider, one live Workflow (`bench-chat-d<delay>`), its cached twin and a primary-slot cap
 * per simulator: the workflows the rows measure (test/bench counts Redis calls on the same one).
 */
export function perSimulator(sims: readonly Pick<Sim, 'delayMs' | 'origin'>[]): string {
  const docs = sims.flatMap((sim) => [
    `apiVersion: switchyard.dev/v1alpha1
kind: Provider
metadata:
  name: sim-d${sim.delayMs}
  namespace: bench
spec:
  type: openai
  baseURL: ${sim.origin}/v1
  credentials:
    secretRef:
      name: simulator-credentials
      key: apiKey
  models:
    - name: gpt-4o-mini
      requestTypes: [chat, completion]
      pricing:
        inputUsdPerMTok: "0.15"
        outputUsdPerMTok: "0.60"
`,
    `apiVersion: switchyard.dev/v1alpha1
kind: Workflow
metadata:
  name: ${workflowName(sim)}
  namespace: bench
spec:
  projectRef:
    name: bench
  description: Chat straight to the simulator with ${sim.delayMs} ms delay.
  requestType: chat
  provider: sim-d${sim.delayMs}
  model: gpt-4o-mini
  testMode: false
`,
    `apiVersion: switchyard.dev/v1alpha1
kind: Workflow
metadata:
  name: ${cachedWorkflowName(sim)}
  namespace: bench
spec:
  projectRef:
    name: bench
  description: The same chat with the response cache on; the bench measures its hits.
  requestType: chat
  provider: sim-d${sim.delayMs}
  model: gpt-4o-mini
  testMode: false
  responseCache:
    ttlSeconds: 3600
`,
    `apiVersion: switchyard.dev/v1alpha1
kind: Workflow
metadata:
  name: ${guardedWorkflowName(sim)}
  namespace: bench
spec:
  projectRef:
    name: bench
  description: The same chat behind a redacting guardrail; the bench measures what its checks cost.
  requestType: chat
  provider: sim-d${sim.delayMs}
  model: gpt-4o-mini
  testMode: false
`,
    `apiVersion: switchyard.dev/v1alpha1
kind: Guardrail
metadata:
  name: ${guardedWorkflowName(sim)}-redact
  namespace: bench
spec:
  projectRef:
    name: bench
  scope: workflows
  workflowRefs:
    - name: ${guardedWorkflowName(sim)}
  rules:
    - { name: cards, type: card, mode: redact }
    - { name: phones, type: phone, mode: redact, regions: [US, GB, DE] }
    - { name: emails, type: email, mode: redact }
    - { name: secrets, type: secret, mode: redact }
`,
    `apiVersion: switchyard.dev/v1alpha1
kind: SpendCap
metadata:
  name: ${workflowName(sim)}-primary-daily
  namespace: bench
spec:
  projectRef:
    name: bench
  scope: workflow
  workflowRef:
    name: ${workflowName(sim)}
  slot: primary
  period: daily
  limitUsd: "1000000"
`,
  ]);
  return docs.join('---\n');
}

/**
 * The gateway pod's entry point in a checkout: the bundle `make build` writes (scripts/bundle-pods.ts),
 * or, in a checkout from before the bundle (a base run through `--root`), the compiled module tree.
 */
function gatewayEntry(root: string = ROOT): string {
  const bundle = join(root, 'dist/gateway/pod/main.js');
  return existsSync(bundle) ? bundle : join(root, 'dist/gateway/src/main.js');
}

export interface GatewayTargetOptions {
  variant?: Variant;
  cpuProfDir?: string;
  /** Opens the process's inspector on this loopback port (bench/lib/inspector.ts profiles over it). */
  inspectPort?: number;
  /** Another checkout's root whose dist/ to run (a before/after comparison); this one by default. */
  root?: string;
  /** V8 / Node flags for the gateway process, e.g. --max-semi-space-size=2. */
  nodeFlags?: string[];
  /** The container's memory limit, as a cgroup the process starts in (bench/lib/cgroup.ts). */
  cgroup?: MemoryCgroup;
  /** More environment for the process (the chart's malloc settings). */
  env?: Record<string, string>;
  /** Node's compile cache folder; a fresh empty one (a new pod's first start) when omitted. */
  compileCache?: string;
}

/**
 * A gateway pod as it runs in production: `node dist/gateway/pod/main.js` (NODE_ENV=production,
 * Node's compile cache on, as in the image), following the snapshot that the operator's publisher
 * put in Redis. The stateful variant serves every row named `gateway ...`; the stateless one the
 * same workflows with no caps and no limits (`gateway stateless ...`).
 */
export async function gatewayTarget(
  sims: Sim[],
  redisUrl: string,
  opts: GatewayTargetOptions = {},
): Promise<Target> {
  const variant = opts.variant ?? 'stateful';
  const entry = gatewayEntry(opts.root);
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run \`make build\` first`);
  const sealKey = randomBytes(32);
  await publishConfig(redisUrl, writeConfig(variant, sims[0]!.origin, perSimulator(sims)), sealKey);
  const port = await freePort();
  const metricsPort = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const prefix = variant === 'stateless' ? 'gateway stateless' : 'gateway';
  const gwAuth = { ...json, authorization: `Bearer ${GATEWAY_KEY}` };
  const compat: Surface = {
    name: `${prefix} compat`,
    request: (sim, stream) => ({
      url: `${origin}/v1/chat/completions`,
      headers: gwAuth,
      body: openaiBody(workflowName(sim), stream),
    }),
  };
  const native: Surface = {
    name: `${prefix} native`,
    request: (sim, stream) => ({
      url: `${origin}/v1/ai`,
      headers: gwAuth,
      body: JSON.stringify({
        workflow: workflowName(sim),
        messages: [{ role: 'user', content: PROMPT }],
        ...(stream ? { stream: true } : {}),
      }),
    }),
  };
  // The same request through the Responses surface (stored: one Redis write before each answer) and
  // the Messages surface: what each surface's parsing, encoding and state cost over chat completions.
  const responses: Surface = {
    name: 'gateway responses',
    request: (sim, stream) => ({
      url: `${origin}/v1/responses`,
      headers: gwAuth,
      body: JSON.stringify({ model: workflowName(sim), input: PROMPT, ...(stream ? { stream: true } : {}) }),
    }),
  };
  const messages: Surface = {
    name: 'gateway messages',
    request: (sim, stream) => ({
      url: `${origin}/v1/messages`,
      headers: { ...json, 'x-api-key': GATEWAY_KEY, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({
        model: workflowName(sim),
        max_tokens: 256,
        messages: [{ role: 'user', content: PROMPT }],
        ...(stream ? { stream: true } : {}),
      }),
    }),
  };
  // Chat completions on the twin workflow behind a redacting guardrail (cards, phones, e-mail, secrets).
  const guarded: Surface = {
    name: 'gateway guarded',
    request: (sim, stream) => ({
      url: `${origin}/v1/chat/completions`,
      headers: gwAuth,
      body: openaiBody(guardedWorkflowName(sim), stream),
    }),
  };
  // Every request after the warm-up's first is a hit: the answer comes from the cache, not the simulator.
  const cacheHit: Surface = {
    name: 'gateway cache hit',
    request: (sim, stream) => ({
      url: `${origin}/v1/chat/completions`,
      headers: gwAuth,
      body: openaiBody(cachedWorkflowName(sim), stream),
    }),
  };
  const prof = [
    ...(opts.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', opts.cpuProfDir] : []),
    ...(opts.inspectPort ? [`--inspect=127.0.0.1:${opts.inspectPort}`] : []),
  ];
  const compileCache = opts.compileCache ?? mkdtempSync(join(tmpdir(), 'switchyard-compile-cache-'));
  return spawnTarget(
    variant === 'stateless' ? 'gateway stateless' : 'gateway',
    [...(opts.nodeFlags ?? []), ...prof, entry],
    {
      ...opts.env,
      NODE_ENV: 'production',
      NODE_COMPILE_CACHE: compileCache,
      REDIS_URL: redisUrl,
      SWITCHYARD_SEAL_KEY: sealKey.toString('hex'),
      SWITCHYARD_HOST: '127.0.0.1',
      SWITCHYARD_PORT: String(port),
      SWITCHYARD_METRICS_PORT: String(metricsPort),
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
    },
    compat.request(sims[0]!, false),
    variant === 'stateless' ? [compat, native] : [compat, native, responses, messages, guarded, cacheHit],
    opts.cgroup,
  );
}

export async function portkeyTarget(sims: Sim[]): Promise<Target> {
  const port = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const surface: Surface = {
    name: 'portkey',
    request: (sim, stream) => ({
      url: `${origin}/v1/chat/completions`,
      headers: {
        ...simAuth,
        'x-portkey-provider': 'openai',
        'x-portkey-custom-host': `${sim.origin}/v1`,
      },
      body: openaiBody('gpt-4o-mini', stream),
    }),
  };
  return spawnTarget(
    'portkey',
    [join(ROOT, 'node_modules/@portkey-ai/gateway/build/start-server.js'), `--port=${port}`, '--headless'],
    { NODE_ENV: 'production' },
    surface.request(sims[0]!, false),
    [surface],
  );
}
