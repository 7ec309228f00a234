import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stopChild } from './child.ts';
import { freePort } from './ports.ts';

/**
 * A throwaway redis-server (Debian's, /usr/bin/redis-server) on a loopback port. By default: a free
 * port, no persistence. Fault tests can ask for AOF persistence and restart it on the same port and
 * data directory, so clients reconnect to the "same" Redis with its data.
 */

export interface RedisStartOptions {
  /** Listen on this port instead of a free one (a clash fails instead of retrying). */
  port?: number;
  /** `appendonly yes` (fsync every write) so data survives restart(). */
  appendonly?: boolean;
  /** Where the AOF lives; a fresh temporary directory (removed at process exit) when omitted. */
  dataDir?: string;
  /** The address to listen on (default 127.0.0.1), e.g. the e2e node's bridge, where pods reach it. */
  host?: string;
}

export interface RunningRedis {
  url: string;
  port: number;
  /** The data directory when persistence is on. */
  dataDir: string | undefined;
  stop(): Promise<void>;
  /** Stops redis (SIGTERM, so the AOF is complete) and starts it again on the same port and data dir. */
  restart(): Promise<void>;
}

const binary = process.env.REDIS_SERVER ?? '/usr/bin/redis-server';

export function ping(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((done) => {
    const sock = createConnection({ host, port });
    let got = '';
    const finish = (ok: boolean) => {
      sock.destroy();
      done(ok);
    };
    sock.setTimeout(1000, () => finish(false));
    sock.once('error', () => finish(false));
    sock.once('connect', () => sock.write('PING\r\n'));
    sock.on('data', (d) => {
      got += d.toString();
      if (got.includes('\r\n')) finish(got.startsWith('+PONG'));
    });
  });
}

interface Process {
  child: ChildProcess;
  stop(): Promise<void>;
}

class PortInUse extends Error {}

async function launch(port: number, dataDir: string | undefined, host: string): Promise<Process> {
  const persistence = dataDir
    ? ['--dir', dataDir, '--appendonly', 'yes', '--appendfsync', 'always']
    : ['--appendonly', 'no'];
  // Off loopback, where protected mode would refuse every client, the caller chose who reaches it.
  const open = host === '127.0.0.1' ? [] : ['--protected-mode', 'no'];
  const args = [
    '--port',
    String(port),
    '--bind',
    host,
    ...open,
    '--save',
    '',
    ...persistence,
    '--daemonize',
    'no',
  ];
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout?.on('data', (d) => (log = (log + d).slice(-4000)));
  child.stderr?.on('data', (d) => (log = (log + d).slice(-4000)));
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const stop = async () => {
    process.off('exit', killOnExit);
    await stopChild(child, 5000);
  };
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await stop();
      if (/Address already in use/i.test(log)) throw new PortInUse(`port ${port} is in use`);
      throw new Error(`redis-server exited (${child.exitCode ?? child.signalCode}):\n${log}`);
    }
    if (await ping(port, host)) return { child, stop };
    await new Promise((r) => setTimeout(r, 50));
  }
  await stop();
  throw new Error(`redis-server did not answer PING on port ${port}:\n${log}`);
}

/** Explains how to get redis-server when it is missing (tests and `make bench` both need it). */
export function checkRedisBinary(): void {
  if (!existsSync(binary))
    throw new Error(
      `${binary} not found: install it with \`apt-get install -y redis-server\` (make redis-install), or set REDIS_SERVER=/path/to/redis-server`,
    );
}

function dataDirFor(opts: RedisStartOptions): string | undefined {
  if (!opts.appendonly) return undefined;
  if (opts.dataDir) {
    mkdirSync(opts.dataDir, { recursive: true });
    return opts.dataDir;
  }
  const dir = mkdtempSync(join(tmpdir(), 'switchyard-redis-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export async function startRedis(opts: RedisStartOptions = {}): Promise<RunningRedis> {
  checkRedisBinary();
  const dataDir = dataDirFor(opts);
  const host = opts.host ?? '127.0.0.1';
  let proc: Process | undefined;
  let port = opts.port ?? 0;
  for (let i = 0; i < 5 && !proc; i++) {
    if (opts.port === undefined) port = await freePort();
    try {
      proc = await launch(port, dataDir, host);
    } catch (err) {
      // A free port can be taken between picking and binding: retry, unless the caller fixed it.
      if (!(err instanceof PortInUse) || opts.port !== undefined) throw err;
    }
  }
  if (!proc) throw new Error('redis-server: no free port after 5 attempts');
  let current: Process = proc;
  return {
    url: `redis://${host}:${port}`,
    port,
    dataDir,
    stop: () => current.stop(),
    restart: async () => {
      await current.stop();
      current = await launch(port, dataDir, host);
    },
  };
}
