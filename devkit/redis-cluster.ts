import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { stopChild } from './child.ts';
import { checkRedisBinary, ping } from './redis.ts';

/**
 * A real three-master Redis Cluster (no replicas) on loopback ports, for tests that must prove the
 * state layer's keys stay within one slot per project. Each node also needs its bus port (+10000).
 */

export interface RunningRedisCluster {
  /** `127.0.0.1:<port>` of each master. */
  nodes: string[];
  stop(): Promise<void>;
}

const server = process.env.REDIS_SERVER ?? '/usr/bin/redis-server';
const cli = process.env.REDIS_CLI ?? '/usr/bin/redis-cli';
const run = promisify(execFile);
const BUS_OFFSET = 10_000;

function canBind(port: number): Promise<boolean> {
  return new Promise((done) => {
    const srv = createServer();
    srv.once('error', () => done(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => done(true)));
  });
}

/** Three ports whose cluster bus ports are free too, picked at random from the unprivileged range. */
async function pickPorts(): Promise<number[]> {
  const ports: number[] = [];
  for (let tries = 0; ports.length < 3 && tries < 200; tries++) {
    const p = 20_000 + Math.floor(Math.random() * 30_000);
    if (ports.includes(p) || ports.includes(p + BUS_OFFSET) || ports.includes(p - BUS_OFFSET)) continue;
    if ((await canBind(p)) && (await canBind(p + BUS_OFFSET))) ports.push(p);
  }
  if (ports.length < 3) throw new Error('redis cluster: could not find three free port pairs');
  return ports;
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`redis cluster: timed out waiting for ${what}`);
}

async function clusterOk(port: number): Promise<boolean> {
  const c = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0 });
  c.on('error', () => undefined);
  try {
    await c.connect();
    const info = String(await c.call('CLUSTER', 'INFO'));
    return /cluster_state:ok/.test(info);
  } catch {
    return false;
  } finally {
    c.disconnect();
  }
}

async function attempt(): Promise<RunningRedisCluster> {
  const ports = await pickPorts();
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-redis-cluster-'));
  const children: ChildProcess[] = [];
  const logs: string[] = [];
  const killAll = () => {
    for (const c of children) c.kill('SIGKILL');
  };
  process.once('exit', killAll);
  const stop = async () => {
    process.off('exit', killAll);
    await Promise.all(children.map((c) => stopChild(c, 5000)));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const [i, port] of ports.entries()) {
      const child = spawn(
        server,
        [
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          join(dir, `nodes-${port}.conf`),
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--dir',
          dir,
          '--save',
          '',
          '--appendonly',
          'no',
          '--daemonize',
          'no',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      logs[i] = '';
      const keep = (d: Buffer) => {
        logs[i] = `${logs[i] ?? ''}${d}`.slice(-4000);
      };
      child.stdout?.on('data', keep);
      child.stderr?.on('data', keep);
      children.push(child);
    }
    for (const [i, port] of ports.entries()) {
      await waitFor(`node ${port} to answer PING`, async () => {
        const child = children[i];
        if (child && (child.exitCode !== null || child.signalCode !== null))
          throw new Error(`redis-server on ${port} exited:\n${logs[i]}`);
        return ping(port);
      });
    }
    const nodes = ports.map((p) => `127.0.0.1:${p}`);
    await run(cli, ['--cluster', 'create', ...nodes, '--cluster-replicas', '0', '--cluster-yes'], {
      timeout: 30_000,
    });
    for (const port of ports) await waitFor(`cluster_state:ok on ${port}`, () => clusterOk(port));
    return { nodes, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

export async function startRedisCluster(): Promise<RunningRedisCluster> {
  checkRedisBinary();
  let last: unknown;
  // Ports are checked free before the nodes bind them; another process can win that race, so retry.
  for (let i = 0; i < 3; i++) {
    try {
      return await attempt();
    } catch (err) {
      last = err;
    }
  }
  throw last;
}
