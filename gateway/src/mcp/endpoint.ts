import { PassThrough } from 'node:stream';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import { authOf, clientAbortSignal } from '../http/context.ts';
import { NO_TRACE } from '../tracing/off.ts';
import { classifyPost, type JsonRpcMessage } from './inbound.ts';
import { RPC, RpcFailure, RpcRefusal, rpcError, rpcResult } from './jsonrpc.ts';
import { modernResult } from './modern.ts';
import { McpService } from './service.ts';
import type { ListChange, McpSession, McpSessionStore } from './sessions.ts';
import { isSessionId } from './sessions.ts';
import type { ToolCalls } from './tool-call.ts';
import type { McpCaller } from './types.ts';
import { UpstreamPool } from './upstreams.ts';

export interface EndpointDeps {
  sessions: McpSessionStore;
  /** Where the upstream-reachability gauge is registered. */
  registry: Registry;
  calls: ToolCalls;
  logger: Logger;
  now: () => number;
  /** An idle session expires after this; every request and every keep-alive of its stream renews it. */
  sessionTtlMs: number;
  /** SSE comment frames on open GET streams, so proxies do not close them for idleness. */
  keepAliveMs: number;
}

const SESSION_HEADER = 'mcp-session-id';
/** The same `list_changed` told again within this (by another pod) is not sent twice. */
const REPEAT_WINDOW_MS = 500;

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return typeof v === 'string' ? v : undefined;
}

function sessionNotFound(): RpcRefusal {
  // 404 tells a legacy client to initialize again (the transport rule); any pod may have served it.
  return new RpcRefusal(
    404,
    rpcError(null, -32001, 'Session not found: it expired, was deleted, or belongs to another API key.'),
  );
}

/**
 * The MCP endpoint over HTTP: POST for messages in both eras, GET for a legacy session's stream of
 * notifications, DELETE to end a session. Loaded with the first MCP request, with the SDK.
 */
export class McpEndpoint {
  readonly #d: EndpointDeps;
  readonly #service: McpService;
  readonly #pool: UpstreamPool;

  constructor(deps: EndpointDeps) {
    this.#d = deps;
    const reached = new Gauge({
      name: 'switchyard_mcp_upstream_up',
      help: "1 when this pod's last connection attempt to an MCP server succeeded, 0 when it failed.",
      labelNames: ['project', 'server'] as const,
      registers: [deps.registry],
    });
    this.#pool = new UpstreamPool({
      logger: deps.logger,
      now: deps.now,
      onReach: (s, up) => reached.set({ project: s.projectId, server: s.config.name }, up ? 1 : 0),
      onListChanged: (projectId, kind) => {
        deps.sessions
          .publish({ projectId, kind })
          .catch((err: Error) =>
            deps.logger.warn({ msg: 'mcp: cannot announce a list change', err: err.message }),
          );
      },
    });
    this.#service = new McpService({
      pool: this.#pool,
      sessions: deps.sessions,
      calls: deps.calls,
      logger: deps.logger,
      now: deps.now,
      sessionTtlMs: deps.sessionTtlMs,
    });
  }

  #caller(req: FastifyRequest, reply: FastifyReply, era: McpCaller['era'], sessionId?: string): McpCaller {
    const auth = authOf(req);
    return {
      requestId: req.id,
      projectId: auth.project.config.id,
      project: auth.project,
      keyId: auth.key.keyId,
      key: auth.key,
      grants: auth.key.toolGrants,
      era,
      sessionId,
      signal: clientAbortSignal(reply.raw),
      trace: req.trace ?? NO_TRACE,
    };
  }

  /** The session a request names, renewed; refused (404) when unknown or another key's. */
  async #session(req: FastifyRequest, id: string): Promise<McpSession> {
    if (!isSessionId(id)) throw sessionNotFound();
    const auth = authOf(req);
    const session = await this.#d.sessions.touch(auth.project.config.id, id, this.#d.sessionTtlMs);
    if (!session || session.keyId !== auth.key.keyId) throw sessionNotFound();
    return session;
  }

  async post(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const inbound = classifyPost(
      {
        protocolVersion: header(req, 'mcp-protocol-version'),
        method: header(req, 'mcp-method'),
        name: header(req, 'mcp-name'),
      },
      req.body,
    );
    const message: JsonRpcMessage = inbound.message;
    const sessionId = header(req, SESSION_HEADER);
    if (inbound.era === 'legacy' && message.method === 'initialize' && message.id !== undefined) {
      const opened = await this.#answer(message, () =>
        this.#service.initialize(this.#caller(req, reply, 'legacy'), message.params),
      );
      const body = 'result' in opened ? rpcResult(message.id, opened.result.result) : opened;
      if ('result' in opened) reply.header('mcp-session-id', opened.result.sessionId);
      await reply.code(200).type('application/json').send(body);
      return;
    }
    // A legacy message without a session is served statelessly: a session is never mandatory.
    if (inbound.era === 'legacy' && sessionId !== undefined) await this.#session(req, sessionId);
    // Notifications and the client's answers to us need no reply.
    if (message.id === undefined || message.method === undefined) {
      await reply.code(202).send();
      return;
    }
    const caller = this.#caller(req, reply, inbound.era, sessionId);
    const answered = await this.#answer(message, () => this.#service.dispatch(caller, message));
    const body =
      'result' in answered
        ? rpcResult(
            message.id,
            inbound.era === 'modern' ? modernResult(message.method, answered.result) : answered.result,
          )
        : answered;
    await reply.code(200).type('application/json').send(body);
  }

  async #answer<T>(
    message: JsonRpcMessage,
    run: () => Promise<T>,
  ): Promise<{ result: T } | ReturnType<typeof rpcError>> {
    try {
      return { result: await run() };
    } catch (err) {
      if (err instanceof RpcFailure) return rpcError(message.id ?? null, err.code, err.message, err.data);
      throw err;
    }
  }

  /** A legacy session's stream: `list_changed` from any pod, and a comment frame every keepAliveMs. */
  async get(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const sessionId = header(req, SESSION_HEADER);
    if (sessionId === undefined) {
      await reply
        .code(405)
        .header('allow', 'POST')
        .type('application/json')
        .send(
          rpcError(
            null,
            RPC.invalidRequest,
            'A GET stream belongs to a session: send Mcp-Session-Id (2026-07-28 clients use subscriptions over POST).',
          ),
        );
      return;
    }
    await this.#session(req, sessionId);
    const projectId = authOf(req).project.config.id;
    const stream = new PassThrough();
    const write = (frame: string) => {
      if (!stream.writableEnded) stream.write(frame);
    };
    // Every pod that holds a connection to the upstream hears its announcement and publishes it:
    // one change reaches this stream once per pod, so repeats within a moment are dropped.
    const lastSent: Partial<Record<ListChange['kind'], number>> = {};
    const stop = this.#d.sessions.listen((change: ListChange) => {
      if (change.projectId !== projectId) return;
      const now = this.#d.now();
      if (now - (lastSent[change.kind] ?? Number.NEGATIVE_INFINITY) < REPEAT_WINDOW_MS) return;
      lastSent[change.kind] = now;
      const note = { jsonrpc: '2.0', method: `notifications/${change.kind}/list_changed` };
      write(`event: message\ndata: ${JSON.stringify(note)}\n\n`);
    });
    const timer = setInterval(() => {
      write(': keep-alive\n\n');
      void this.#d.sessions.touch(projectId, sessionId, this.#d.sessionTtlMs).then(
        (s) => {
          if (!s) stream.end();
        },
        () => undefined,
      );
    }, this.#d.keepAliveMs);
    timer.unref();
    const cleanup = () => {
      clearInterval(timer);
      stop();
      stream.end();
    };
    reply.raw.once('close', cleanup);
    stream.once('end', () => {
      clearInterval(timer);
      stop();
    });
    write(': stream open\n\n');
    await reply
      .code(200)
      .header('content-type', 'text/event-stream')
      .header('cache-control', 'no-cache, no-transform')
      .header('x-accel-buffering', 'no')
      .send(stream);
  }

  async delete(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const sessionId = header(req, SESSION_HEADER);
    if (sessionId === undefined)
      throw new RpcRefusal(
        400,
        rpcError(null, RPC.invalidRequest, 'DELETE ends a session: send its Mcp-Session-Id.'),
      );
    await this.#session(req, sessionId);
    await this.#d.sessions.delete(authOf(req).project.config.id, sessionId);
    await reply.code(204).send();
  }

  async close(): Promise<void> {
    await this.#pool.close();
  }
}
