import { cpSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
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

export type TargetName = 'direct' | 'passthrough' | 'gateway' | 'portkey';
export const TARGET_NAMES: TargetName[] = ['direct', 'passthrough', 'gateway', 'portkey'];

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
): Promise<Target> {
  const proc = startProc(name, NODE, args, { env, cwd: ROOT });
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

const workflowName = (sim: Sim) => `bench-chat-d${sim.delayMs}`;
const cachedWorkflowName = (sim: Sim) => `bench-cached-d${sim.delayMs}`;

/** bench/config plus one Provider and one live Workflow per simulator, in a temp folder. */
function gatewayConfig(sims: Sim[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-bench-'));
  const src = join(ROOT, 'bench/config');
  for (const f of readdirSync(src)) if (f.endsWith('.yaml')) cpSync(join(src, f), join(dir, f));
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
  writeFileSync(join(dir, '50-generated.yaml'), docs.join('---\n'));
  return dir;
}

export async function gatewayTarget(
  sims: Sim[],
  redisUrl: string,
  opts: { cpuProfDir?: string } = {},
): Promise<Target> {
  const port = await freePort();
  const metricsPort = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  const gwAuth = { ...json, authorization: `Bearer ${GATEWAY_KEY}` };
  const compat: Surface = {
    name: 'gateway compat',
    request: (sim, stream) => ({
      url: `${origin}/v1/chat/completions`,
      headers: gwAuth,
      body: openaiBody(workflowName(sim), stream),
    }),
  };
  const native: Surface = {
    name: 'gateway native',
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
  // Every request after the warm-up's first is a hit: the answer comes from the cache, not the simulator.
  const cacheHit: Surface = {
    name: 'gateway cache hit',
    request: (sim, stream) => ({
      url: `${origin}/v1/chat/completions`,
      headers: gwAuth,
      body: openaiBody(cachedWorkflowName(sim), stream),
    }),
  };
  const prof = opts.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', opts.cpuProfDir] : [];
  return spawnTarget(
    'gateway',
    [...NODE_FLAGS, ...prof, join(ROOT, 'embedded/main.ts'), '--config', gatewayConfig(sims)],
    {
      REDIS_URL: redisUrl,
      SWITCHYARD_HOST: '127.0.0.1',
      SWITCHYARD_PORT: String(port),
      SWITCHYARD_METRICS_PORT: String(metricsPort),
      LOG_LEVEL: 'warn',
    },
    compat.request(sims[0]!, false),
    [compat, native, responses, messages, cacheHit],
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
