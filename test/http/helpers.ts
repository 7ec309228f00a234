/**
 * A minimal Fastify app wired to the gateway's own HTTP units the way http/app.ts wires them: the
 * error encoder (error handler, framework errors, the 404), the JSON parsers and the zod-only schema
 * controller. Tests add their routes and send real requests through it with `app.inject`; each
 * answer carries its request id (`x-test-request-id`) and the refusal recorded (`x-test-refusal`).
 */
import { Writable } from 'node:stream';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import pino from 'pino';
import { GatewayError } from '#gateway/errors/index';
import { sendError, sendFrameworkError } from '#gateway/http/errors';
import { installJsonParsers } from '#gateway/http/json-parser';
import { ZOD_ONLY } from '#gateway/http/zod-only';

export interface TestApp {
  app: FastifyInstance;
  /** Log lines the app wrote (JSON objects), in order. */
  logs: Record<string, unknown>[];
}

export function testApp(
  opts: { maxJsonDepth?: number; bodyLimit?: number; maxParamLength?: number } = {},
): TestApp {
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n'))
        if (line) logs.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  let seq = 0;
  const app = Fastify({
    loggerInstance: pino({ level: 'info' }, sink) as FastifyBaseLogger,
    disableRequestLogging: true,
    genReqId: () => `req-${++seq}`,
    frameworkErrors: sendFrameworkError,
    bodyLimit: opts.bodyLimit ?? 1024,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: opts.maxParamLength ?? 64 },
    schemaController: ZOD_ONLY,
  });
  app.decorateRequest('startedAt', 0);
  app.decorateRequest('refusal', null);
  installJsonParsers(app, opts.maxJsonDepth ?? 8);
  // The request's id and the refusal the error encoder recorded on it, as headers the tests read.
  app.addHook('onSend', (req, reply, payload, done) => {
    void reply.header('x-test-request-id', req.id);
    if (req.refusal) void reply.header('x-test-refusal', req.refusal.code);
    done(null, payload);
  });
  app.setErrorHandler((err, req, reply) => sendError(err, req, reply));
  app.setNotFoundHandler((req, reply) =>
    sendError(
      new GatewayError('not_found', `No route for ${req.method} ${req.url.split('?')[0]}.`),
      req,
      reply,
    ),
  );
  return { app, logs };
}

export const SURFACES = ['native', 'compat', 'responses', 'messages'] as const;
