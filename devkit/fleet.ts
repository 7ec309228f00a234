import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { connectRedis, type RedisConnection } from '#contract';
import { compileSnapshot, formatProblem, loadConfigFolder, SnapshotPublisher } from '#operator';
import { freePort } from './ports.ts';
import { type RunningRedis, startRedis } from './redis.ts';
import { type RunningRedisCluster, startRedisCluster } from './redis-cluster.ts';

/**
 * A fleet of real gateway pods for fault tests: N `gateway/src/main.ts` processes sharing one Redis
 * (single node with AOF, or a three-master cluster), each killable and restartable on the same
 * ports, with the snapshot put into Redis the way the operator does it (compile + publish).
 */

export interface FleetOptions {
  /** CR manifests (Kubernetes objects, Secrets included) to compile and publish. */
  manifests?: readonly object[];
  /** Or a folder of CR YAML, read like embedded mode reads `--config`. */
  configDir?: string;
  gateways: number;
  redis?: 'single' | 'cluster';
  /** Extra environment for every gateway process (e.g. SWITCHYARD_SPEND_CAPS_ON_REDIS_DOWN). */
  env?: Record<string, string>;
  /** How long a gateway may take to log `gateway ready` (default 30 s). */
  readyTimeoutMs?: number;
}

export interface GatewayLogLine {
  /** Which start of this gateway wrote it: 0 for the first, +1 per restart. */
  run: number;
  stream: 'stdout' | 'stderr';
  text: string;
  /** The pino record when the line is JSON. */
  json: Record<string, unknown> | undefined;
}

export interface FleetGateway {
  readonly index: number;
  readonly url: string;
  readonly metricsUrl: string;
  /** The current process id; undefined while the gateway is down. */
  readonly pid: number | undefined;
  readonly running: boolean;
  /** Sends `signal` (SIGKILL by default, a crash) and resolves once the process is gone. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts the gateway again on the same ports (killing it first if it still runs); resolves when ready. */
  restart(): Promise<void>;
  logs(): readonly GatewayLogLine[];
}

export interface FleetRedis {
  /** The single Redis; empty for a cluster (gateways get REDIS_CLUSTER_NODES only). */
  readonly url: string;
  /** Cluster seed nodes (`host:port`); empty for a single Redis. */
  readonly nodes: readonly string[];
  /** What a client of this Redis connects with (`connectRedis` from #contract). */
  readonly connection: RedisConnection;
  /** Stops Redis and starts it again on the same port with its append-only file (single Redis only). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export interface PublishedConfig {
  version: string;
  /** False when this version was already current. */
  published: boolean;
  /** Files or objects that were skipped, and objects that compiled but are not ready. */
  problems: string[];
}

export interface Fleet {
  redis: FleetRedis;
  gateways: FleetGateway[];
  /** The config the fleet started with. */
  initial: PublishedConfig;
  /** Compiles `manifests` and publishes them: what an operator does on a change. */
  publish(manifests: readonly object[]): Promise<PublishedConfig>;
  stop(): Promise<void>;
}

export class FleetError extends Error {
  readonly code: 'FLEET_START_FAILED' | 'FLEET_UNSUPPORTED' | 'FLEET_BAD_OPTIONS';
  constructor(code: FleetError['code'], message: string) {
    super(message);
    this.code = code;
  }
}

const repoRoot = fileURLToPath(new URL('..', import.meta.url));
const MAX_LOG_LINES = 5000;

/** Variables of the parent that would change what a gateway pod does; the fleet sets its own. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!/^(REDIS_|SWITCHYARD_|LOG_LEVEL$)/.test(k)) env[k] = v;
  return { ...env, ...extra };
}

async function compileFolder(dir: string, sealKey: Buffer) {
  const loaded = await loadConfigFolder(dir);
  const problems = loaded.problems.map(formatProblem);
  const { snapshot, verdicts } = compileSnapshot({
    objects: loaded.objects,
    secrets: loaded.secrets,
    now: new Date(),
    sealKey,
  });
  for (const v of verdicts)
    if (!v.ok) problems.push(`${v.ref.kind} ${v.ref.namespace}/${v.ref.name}: ${v.reason}: ${v.message}`);
  return { snapshot, problems };
}

/** A new connection per publish, so publishing just after a Redis restart needs no retry logic here. */
async function publishTo(conn: RedisConnection, dir: string, sealKey: Buffer): Promise<PublishedConfig> {
  const { snapshot, problems } = await compileFolder(dir, sealKey);
  const client = connectRedis(conn, { lazyConnect: true, maxRetriesPerRequest: 2 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    const r = await new SnapshotPublisher(client).publish(snapshot);
    return { version: r.version, published: r.published, problems };
  } finally {
    client.disconnect();
  }
}

async function startFleetRedis(kind: 'single' | 'cluster'): Promise<FleetRedis> {
  if (kind === 'single') {
    const r: RunningRedis = await startRedis({ appendonly: true });
    return {
      url: r.url,
      nodes: [],
      connection: { url: r.url },
      restart: () => r.restart(),
      stop: () => r.stop(),
    };
  }
  const c: RunningRedisCluster = await startRedisCluster();
  return {
    url: '',
    nodes: c.nodes,
    connection: { clusterNodes: c.nodes },
    restart: () =>
      Promise.reject(new FleetError('FLEET_UNSUPPORTED', 'restarting a Redis Cluster is not supported yet')),
    stop: () => c.stop(),
  };
}

interface GatewaySpec {
  index: number;
  port: number;
  metricsPort: number;
  env: NodeJS.ProcessEnv;
  readyTimeoutMs: number;
}

class GatewayProcess implements FleetGateway {
  readonly index: number;
  readonly url: string;
  readonly metricsUrl: string;
  readonly #spec: GatewaySpec;
  readonly #lines: GatewayLogLine[] = [];
  #child: ChildProcess | undefined;
  #exited: Promise<void> = Promise.resolve();
  #run = -1;

  constructor(spec: GatewaySpec) {
    this.#spec = spec;
    this.index = spec.index;
    this.url = `http://127.0.0.1:${spec.port}`;
    this.metricsUrl = `http://127.0.0.1:${spec.metricsPort}`;
  }

  get pid(): number | undefined {
    return this.running ? this.#child?.pid : undefined;
  }

  get running(): boolean {
    const c = this.#child;
    return c !== undefined && c.exitCode === null && c.signalCode === null;
  }

  logs(): readonly GatewayLogLine[] {
    return this.#lines;
  }

  #keep(run: number, stream: GatewayLogLine['stream']) {
    let partial = '';
    return (chunk: Buffer) => {
      const parts = (partial + chunk.toString()).split('\n');
      partial = parts.pop() ?? '';
      for (const text of parts) {
        if (!text) continue;
        let json: Record<string, unknown> | undefined;
        try {
          const v: unknown = JSON.parse(text);
          if (v && typeof v === 'object' && !Array.isArray(v)) json = v as Record<string, unknown>;
        } catch {
          json = undefined;
        }
        this.#lines.push({ run, stream, text, json });
        if (this.#lines.length > MAX_LOG_LINES) this.#lines.splice(0, this.#lines.length - MAX_LOG_LINES);
      }
    };
  }

  async start(): Promise<void> {
    if (this.running) throw new FleetError('FLEET_BAD_OPTIONS', `gateway ${this.index} is already running`);
    const run = ++this.#run;
    const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', 'gateway/src/main.ts'], {
      cwd: repoRoot,
      env: this.#spec.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.#child = child;
    this.#exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.stdout?.on('data', this.#keep(run, 'stdout'));
    child.stderr?.on('data', this.#keep(run, 'stderr'));
    await this.#waitReady(run, child);
  }

  /** The `gateway ready` line, or (when LOG_LEVEL hides it) /healthz answering on the metrics port. */
  async #waitReady(run: number, child: ChildProcess): Promise<void> {
    const deadline = Date.now() + this.#spec.readyTimeoutMs;
    while (Date.now() < deadline) {
      if (child.exitCode !== null || child.signalCode !== null)
        throw new FleetError(
          'FLEET_START_FAILED',
          `gateway ${this.index} exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${this.#tail(run)}`,
        );
      if (this.#lines.some((l) => l.run === run && l.json?.msg === 'gateway ready')) return;
      const healthy = await fetch(`${this.metricsUrl}/healthz`, { signal: AbortSignal.timeout(500) }).then(
        (r) => r.ok && child.exitCode === null,
        () => false,
      );
      if (healthy) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new FleetError(
      'FLEET_START_FAILED',
      `gateway ${this.index} not ready after ${this.#spec.readyTimeoutMs} ms:\n${this.#tail(run)}`,
    );
  }

  #tail(run: number): string {
    return this.#lines
      .filter((l) => l.run === run)
      .slice(-30)
      .map((l) => l.text)
      .join('\n');
  }

  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (!this.running) return;
    this.#child?.kill(signal);
    await this.#exited;
  }

  async restart(): Promise<void> {
    await this.kill('SIGKILL');
    await this.start();
  }

  /** Graceful stop (SIGTERM, the pod's drain), then SIGKILL if it lingers. */
  async stop(graceMs = 5000): Promise<void> {
    if (!this.running) return;
    this.#child?.kill('SIGTERM');
    const timer = setTimeout(() => this.#child?.kill('SIGKILL'), graceMs);
    await this.#exited;
    clearTimeout(timer);
  }

  /** Last-resort cleanup when the test process exits without stop(). */
  killNow(): void {
    if (this.running) this.#child?.kill('SIGKILL');
  }
}

export async function startFleet(opts: FleetOptions): Promise<Fleet> {
  if ((opts.manifests === undefined) === (opts.configDir === undefined))
    throw new FleetError('FLEET_BAD_OPTIONS', 'give exactly one of manifests and configDir');
  if (!Number.isInteger(opts.gateways) || opts.gateways < 1)
    throw new FleetError('FLEET_BAD_OPTIONS', 'gateways must be a positive integer');

  const sealKey = randomBytes(32);
  const work = await mkdtemp(join(tmpdir(), 'switchyard-fleet-'));
  let publishes = 0;
  const writeManifests = async (manifests: readonly object[]): Promise<string> => {
    const dir = join(work, `config-${publishes++}`);
    await mkdir(dir);
    await writeFile(join(dir, 'config.yaml'), manifests.map((m) => stringify(m)).join('---\n'));
    return dir;
  };

  let redis: FleetRedis | undefined;
  const gateways: GatewayProcess[] = [];
  const killAll = () => {
    for (const g of gateways) g.killNow();
  };
  process.once('exit', killAll);
  const stop = async () => {
    process.off('exit', killAll);
    await Promise.all(gateways.map((g) => g.stop()));
    await redis?.stop();
    await rm(work, { recursive: true, force: true });
  };

  try {
    redis = await startFleetRedis(opts.redis ?? 'single');
    const conn = redis.connection;
    const dir = opts.configDir ?? (await writeManifests(opts.manifests ?? []));
    const initial = await publishTo(conn, dir, sealKey);
    // A cluster is named by its seeds alone, as in a deployment: snapshot channel and runtime state.
    const common: Record<string, string> = {
      ...(redis.nodes.length > 0 ? { REDIS_CLUSTER_NODES: redis.nodes.join(',') } : { REDIS_URL: redis.url }),
      SWITCHYARD_SEAL_KEY: sealKey.toString('hex'),
      SWITCHYARD_HOST: '127.0.0.1',
      SWITCHYARD_SHUTDOWN_GRACE_MS: '2000',
      LOG_LEVEL: 'info',
    };
    // Picked once: a restarted gateway comes back on the same ports, so clients simply reconnect.
    const taken = new Set<number>();
    const port = async () => {
      let p = await freePort();
      while (taken.has(p)) p = await freePort();
      taken.add(p);
      return p;
    };
    for (let index = 0; index < opts.gateways; index++) {
      const [apiPort, metricsPort] = [await port(), await port()];
      gateways.push(
        new GatewayProcess({
          index,
          port: apiPort,
          metricsPort,
          readyTimeoutMs: opts.readyTimeoutMs ?? 30_000,
          env: childEnv({
            ...common,
            ...opts.env,
            SWITCHYARD_PORT: String(apiPort),
            SWITCHYARD_METRICS_PORT: String(metricsPort),
          }),
        }),
      );
    }
    await Promise.all(gateways.map((g) => g.start()));
    return {
      redis,
      gateways,
      initial,
      publish: async (manifests) => publishTo(conn, await writeManifests(manifests), sealKey),
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
