import { createRequire } from 'node:module';
import { isIP, type Socket } from 'node:net';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { ConfigError } from '../config/env.ts';
import { errorBody, GatewayError } from '../errors/index.ts';
import { DEFAULT_MAX_JSON_DEPTH } from '../json/depth.ts';
import type { GatewayMetrics } from '../observability/metrics.ts';

// Required, not imported: an ESM import of node:http builds its namespace by reading every export,
// and the lazy WebSocket getters among them load Node's bundled undici (fetch, WebSocket): about
// 2 MB of a pod's RSS for code a gateway never runs (nodejs/node#59686).
const { STATUS_CODES } = createRequire(import.meta.url)('node:http') as typeof import('node:http');

/**
 * What one gateway pod lets its clients hold: how long a request may take to arrive, how long an
 * idle keep-alive connection stays open, how many connections it takes at once, how deep a JSON
 * body may nest, and which proxies' X-Forwarded-* headers count. All from the environment.
 */
export interface HttpLimits {
  /** Time to receive a request's headers (from its first byte, or the connection's opening). */
  headersTimeoutMs: number;
  /** Time to receive a whole request, headers and body; streaming answers are not bounded by it. */
  requestTimeoutMs: number;
  /** An idle keep-alive connection is closed after this long without a request. */
  keepAliveTimeoutMs: number;
  /** Open connections (HTTP and WebSocket) per pod; more are closed on arrival. */
  maxConnections: number;
  /** Nesting depth a JSON body may have. */
  maxJsonDepth: number;
  /** Addresses (IPs, CIDRs, or `loopback`/`linklocal`/`uniquelocal`) whose X-Forwarded-* are honoured. */
  trustedProxies: string[];
}

/** Path parameters (workflow names, URL-encoded: up to three characters each) fit well below this. */
export const MAX_PARAM_LENGTH = 1024;

const PROXY_KEYWORDS = new Set(['loopback', 'linklocal', 'uniquelocal']);
const isProxyAddress = (s: string): boolean => {
  if (PROXY_KEYWORDS.has(s)) return true;
  const [ip, bits, extra] = s.split('/');
  if (extra !== undefined || !ip || !isIP(ip)) return false;
  if (bits === undefined) return true;
  const max = isIP(ip) === 4 ? 32 : 128;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= max;
};

const ms = (fallback: number) => z.coerce.number().int().min(100).max(3_600_000).default(fallback);

const env = z
  .object({
    SWITCHYARD_HEADERS_TIMEOUT_MS: ms(10_000),
    SWITCHYARD_REQUEST_TIMEOUT_MS: ms(60_000),
    SWITCHYARD_KEEP_ALIVE_TIMEOUT_MS: ms(72_000),
    SWITCHYARD_MAX_CONNECTIONS: z.coerce.number().int().min(1).max(1_000_000).default(4096),
    SWITCHYARD_MAX_JSON_DEPTH: z.coerce.number().int().min(8).max(256).default(DEFAULT_MAX_JSON_DEPTH),
    SWITCHYARD_TRUSTED_PROXIES: z
      .string()
      .default('')
      .transform((s) =>
        s
          .split(',')
          .map((p) => p.trim())
          .filter((p) => p.length > 0),
      )
      .pipe(
        z.array(z.string().refine(isProxyAddress, 'must be IPs, CIDRs, loopback, linklocal or uniquelocal')),
      ),
  })
  .refine((e) => e.SWITCHYARD_HEADERS_TIMEOUT_MS <= e.SWITCHYARD_REQUEST_TIMEOUT_MS, {
    message: 'SWITCHYARD_HEADERS_TIMEOUT_MS must not exceed SWITCHYARD_REQUEST_TIMEOUT_MS',
  });

export function httpLimitsFromEnv(source: NodeJS.ProcessEnv = process.env): HttpLimits {
  const parsed = env.safeParse(source);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`invalid environment:\n  ${lines.join('\n  ')}`);
  }
  const e = parsed.data;
  return {
    headersTimeoutMs: e.SWITCHYARD_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: e.SWITCHYARD_REQUEST_TIMEOUT_MS,
    keepAliveTimeoutMs: e.SWITCHYARD_KEEP_ALIVE_TIMEOUT_MS,
    maxConnections: e.SWITCHYARD_MAX_CONNECTIONS,
    maxJsonDepth: e.SWITCHYARD_MAX_JSON_DEPTH,
    trustedProxies: e.SWITCHYARD_TRUSTED_PROXIES,
  };
}

/** The reply a connection is serving, so a body that stops arriving is answered on its own request. */
const CURRENT = Symbol('switchyard.currentReply');
type TrackedSocket = Socket & { [CURRENT]?: FastifyReply };

/** An error answered on a connection that has no request to answer it on (native shape), then closed. */
function answerRaw(socket: Socket, err: GatewayError): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(errorBody('native', err));
  socket.end(
    `HTTP/1.1 ${err.status} ${STATUS_CODES[err.status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    () => socket.destroy(),
  );
}

const timeout = (what: string, ms: number) =>
  new GatewayError('request_timeout', `The request ${what} did not arrive within ${ms} ms.`, {
    hint: 'Send the whole request at once; the connection is closed.',
  });

/**
 * Fastify options for the API server. Node's HTTP server enforces the receive timeouts (checked
 * every `connectionsCheckingInterval`, so a stalled client is cut within a fraction of its limit
 * past it); the client-error handler answers them 408 in the API's error shape and counts them.
 */
export function serverOptions(limits: HttpLimits, metrics: GatewayMetrics) {
  const checkEveryMs = Math.max(50, Math.min(1000, Math.floor(limits.headersTimeoutMs / 4)));
  return {
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    http: { headersTimeout: limits.headersTimeoutMs, connectionsCheckingInterval: checkEveryMs },
    trustProxy: limits.trustedProxies.length > 0 ? limits.trustedProxies : false,
    clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
      if (err.code === 'ECONNRESET' || socket.destroyed) return;
      if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
        const reply = (socket as TrackedSocket)[CURRENT];
        if (reply && !reply.sent && !reply.raw.headersSent && !reply.request.raw.complete) {
          // Headers arrived, the body did not: the request's own body reader fails with the 408, so
          // it is answered (and logged, and settled) like any refusal, then the connection closes.
          metrics.requestTimeouts.inc({ phase: 'body' });
          void reply.header('connection', 'close');
          reply.request.raw.emit('error', timeout('body', limits.requestTimeoutMs));
          return;
        }
        metrics.requestTimeouts.inc({ phase: 'headers' });
        answerRaw(socket, timeout('headers', limits.headersTimeoutMs));
        return;
      }
      answerRaw(
        socket,
        err.code === 'HPE_HEADER_OVERFLOW'
          ? new GatewayError('headers_too_large', 'The request headers are too large.')
          : new GatewayError('invalid_request', 'The request is not valid HTTP/1.1.'),
      );
    },
  };
}

/** Connection cap, idle keep-alive reaping and the connection metrics, on the app's server. */
export function installServerLimits(app: FastifyInstance, limits: HttpLimits, metrics: GatewayMetrics): void {
  const server = app.server;
  // Node accepts and closes at once what exceeds the cap: the pod keeps its descriptors and memory.
  server.maxConnections = limits.maxConnections;
  server.on('drop', () => metrics.connectionsRefused.inc());
  server.on('connection', (socket: Socket) => {
    metrics.connections.inc();
    socket.once('close', () => metrics.connections.dec());
  });
  // With no socket timeout configured, the only socket timeouts are idle keep-alive connections
  // (keepAliveTimeout): a listener here takes over closing them, so they are counted.
  server.on('timeout', (socket: Socket) => {
    metrics.idleClosed.inc();
    socket.destroy();
  });
  app.addHook('onRequest', (req, reply, done) => {
    (req.raw.socket as TrackedSocket)[CURRENT] = reply;
    done();
  });
}
