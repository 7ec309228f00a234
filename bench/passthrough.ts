/**
 * The limit of this stack: a bare Fastify + undici pass-through written only for the benchmark.
 * No auth, no validation, no routing: it forwards the raw body to the upstream origin (from
 * `x-bench-upstream`, else --upstream) on the same path and streams the answer back.
 *   node bench/passthrough.ts --port 8081 --upstream http://127.0.0.1:9999
 */
import { parseArgs } from 'node:util';
import Fastify from 'fastify';
import { Pool } from 'undici';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '8081' },
    host: { type: 'string', default: '127.0.0.1' },
    upstream: { type: 'string', default: 'http://127.0.0.1:9999' },
  },
});

const pools = new Map<string, Pool>();
function pool(origin: string): Pool {
  let p = pools.get(origin);
  if (!p) {
    p = new Pool(origin, { connections: 256, keepAliveTimeout: 60_000 });
    pools.set(origin, p);
  }
  return p;
}

const app = Fastify({ logger: false, bodyLimit: 10 * 1024 * 1024 });
app.removeAllContentTypeParsers();
app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

app.post('/*', async (req, reply) => {
  const header = req.headers['x-bench-upstream'];
  const origin = typeof header === 'string' ? header : (values.upstream ?? '');
  const headers: Record<string, string> = {
    'content-type': req.headers['content-type'] ?? 'application/json',
  };
  if (req.headers.authorization) headers.authorization = req.headers.authorization;
  const res = await pool(origin).request({
    method: 'POST',
    path: req.url,
    headers,
    body: req.body as Buffer,
  });
  reply.code(res.statusCode);
  const type = res.headers['content-type'];
  if (typeof type === 'string') reply.header('content-type', type);
  return reply.send(res.body);
});

await app.listen({ host: values.host, port: Number(values.port) });
process.stdout.write(`passthrough listening on ${values.host}:${values.port} → ${values.upstream}\n`);
const stop = () => {
  app.close().then(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
