import { existsSync } from 'node:fs';
import { createConnection } from 'node:net';
import { freePort, type Proc, startProc } from './proc.ts';

/** A throwaway redis-server on loopback, no persistence. */

const binary = process.env.REDIS_SERVER ?? '/usr/bin/redis-server';

export function checkRedisBinary(): void {
  if (existsSync(binary)) return;
  throw new Error(
    `make bench needs redis-server at ${binary} (the gateway follows its configuration snapshot from Redis).\n` +
      'Install it with: sudo apt-get install -y redis-server   (or set REDIS_SERVER=/path/to/redis-server)',
  );
}

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

export async function startRedis(): Promise<{ proc: Proc; url: string }> {
  checkRedisBinary();
  const port = await freePort();
  const proc = startProc('redis', binary, [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    'no',
  ]);
  for (let i = 0; i < 200; i++) {
    if (await ping(port)) return { proc, url: `redis://127.0.0.1:${port}` };
    if (proc.child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 25));
  }
  await proc.stop();
  throw new Error(`redis-server did not answer on port ${port}:\n${proc.log()}`);
}
