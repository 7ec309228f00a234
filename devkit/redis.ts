import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createConnection } from 'node:net';
import { freePort } from './ports.ts';

/** A throwaway redis-server (Debian's, /usr/bin/redis-server) on a free loopback port, no persistence. */

export interface RunningRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
}

const binary = process.env.REDIS_SERVER ?? '/usr/bin/redis-server';

function ping(port: number): Promise<boolean> {
  return new Promise((done) => {
    const sock = createConnection({ host: '127.0.0.1', port });
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

async function attempt(): Promise<RunningRedis | undefined> {
  const port = await freePort();
  const args = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
    '--daemonize',
    'no',
  ];
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  child.stdout.on('data', (d) => (log = (log + d).slice(-4000)));
  child.stderr.on('data', (d) => (log = (log + d).slice(-4000)));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const stop = async () => {
    process.off('exit', killOnExit);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    }
  };
  for (let i = 0; i < 100; i++) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await stop();
      if (/Address already in use/i.test(log)) return undefined; // lost a port race: retry
      throw new Error(`redis-server exited (${child.exitCode ?? child.signalCode}):\n${log}`);
    }
    if (await ping(port)) return { url: `redis://127.0.0.1:${port}`, port, stop };
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

export async function startRedis(): Promise<RunningRedis> {
  checkRedisBinary();
  for (let i = 0; i < 5; i++) {
    const r = await attempt();
    if (r) return r;
  }
  throw new Error('redis-server: no free port after 5 attempts');
}
