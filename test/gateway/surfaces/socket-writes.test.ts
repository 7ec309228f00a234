/**
 * How many writes an answer takes on the client's socket. On loopback a write's system call does the
 * receiver's work too and is the largest share of a request's CPU, so an answer goes out as one:
 * status line, headers and body together; a stream's head goes with its first frame. Counted at the
 * server socket's Writable hooks (`_write`, `_writev`), one call of which is one system call for an
 * answer this small; a fresh connection per request, so only that request's bytes are counted.
 */
import { request } from 'node:http';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../harness/gateway.ts';
import { API_KEY, baseConfig, workflow } from '../../harness/manifests.ts';
import { type Simulator, startSimulator } from '../../simulator/index.ts';

let sim: Simulator;
let gw: RunningGateway;
/** The chunks of each write on every socket the gateway accepted, in order. */
let writes: string[][] = [];

beforeAll(async () => {
  sim = await startSimulator();
  gw = await startGateway([
    ...baseConfig(sim.url),
    workflow('chat', { provider: 'oai', model: 'gpt-4o-mini' }),
  ]);
  gw.gateway.app.server.on('connection', (socket: Socket) => {
    type Hooks = {
      _write(chunk: Buffer | string, enc: BufferEncoding, cb: (err?: Error | null) => void): void;
      _writev(chunks: { chunk: Buffer | string }[], cb: (err?: Error | null) => void): void;
    };
    const s = socket as unknown as Hooks;
    const write = s._write.bind(socket);
    const writev = s._writev.bind(socket);
    s._write = (chunk, enc, cb) => {
      writes.push([String(chunk)]);
      write(chunk, enc, cb);
    };
    s._writev = (chunks, cb) => {
      writes.push(chunks.map((c) => String(c.chunk)));
      writev(chunks, cb);
    };
  });
});
afterAll(async () => {
  await gw?.close();
  await sim?.close();
});

/** One request on a connection of its own; resolves with the whole answer once the socket closed. */
function post(path: string, body: unknown): Promise<{ status: number; text: string }> {
  const url = new URL(path, gw.url);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent: false,
        headers: {
          authorization: `Bearer ${API_KEY}`,
          'content-type': 'application/json',
          connection: 'close',
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () => res.socket.once('close', () => resolve({ status: res.statusCode ?? 0, text })));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe('writes per answer on the client socket', () => {
  it('a chat completion is one write: head and body together', async () => {
    writes = [];
    const res = await post('/v1/chat/completions', {
      model: 'chat',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(res.status).toBe(200);
    expect(writes).toHaveLength(1);
    const [only] = writes;
    expect(only!.join('')).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\n\{"id":/);
  });

  it('a native answer is one write', async () => {
    writes = [];
    const res = await post('/v1/ai', { workflow: 'chat', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.status).toBe(200);
    expect(writes).toHaveLength(1);
  });

  it("a stream's head goes out with its first frame", async () => {
    writes = [];
    const res = await post('/v1/chat/completions', {
      model: 'chat',
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(res.status).toBe(200);
    expect(res.text).toContain('data: [DONE]');
    const first = writes[0]!.join('');
    expect(first).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*\r\n\r\n[0-9a-f]+\r\ndata: \{/);
  });
});
