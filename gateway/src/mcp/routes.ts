import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/index.ts';
import { sendError } from '../http/errors.ts';
import { jsonTooDeep } from '../json/depth.ts';
import type { EndpointDeps, McpEndpoint } from './endpoint.ts';
import { RPC, RpcRefusal, rpcError } from './jsonrpc.ts';

/** The largest POST body: a JSON-RPC message with a tool's arguments (the SDK's default too). */
export const MCP_BODY_LIMIT = 4 * 1024 * 1024;
const MAX_DEPTH = 64;

/** `/.well-known/oauth-protected-resource` + the endpoint's path (RFC 9728, §3.1). */
export function metadataPath(endpointPath: string): string {
  return `/.well-known/oauth-protected-resource${endpointPath}`;
}

function originOf(req: FastifyRequest): string {
  return `${req.protocol}://${req.host}`;
}

/**
 * The MCP endpoint's HTTP face, always registered; the endpoint itself (and the MCP SDK) is loaded
 * with the first request, so a gateway that serves no MCP never holds it.
 */
export class McpHttp {
  readonly #deps: EndpointDeps;
  #endpoint: Promise<McpEndpoint> | undefined;

  constructor(deps: EndpointDeps) {
    this.#deps = deps;
  }

  #load(): Promise<McpEndpoint> {
    this.#endpoint ??= import('./endpoint.ts').then((m) => new m.McpEndpoint(this.#deps));
    return this.#endpoint;
  }

  /** POST/GET/DELETE `<prefix>/mcp`, in a scope of their own (their body parser and error shape). */
  register(scoped: FastifyInstance, prefix: string): void {
    const path = `${prefix}/mcp`;
    void scoped.register(async (mcp) => {
      mcp.removeAllContentTypeParsers();
      const parse = mcp.getDefaultJsonParser('error', 'error');
      mcp.addContentTypeParser('*', { parseAs: 'string', bodyLimit: MCP_BODY_LIMIT }, (req, body, done) => {
        const text = String(body);
        if (jsonTooDeep(text, MAX_DEPTH)) {
          done(
            new RpcRefusal(
              400,
              rpcError(null, RPC.invalidRequest, `The message nests more than ${MAX_DEPTH} levels deep.`),
            ),
          );
          return;
        }
        parse(req, text, (err, value) => {
          if (err)
            done(
              new RpcRefusal(400, rpcError(null, RPC.parseError, 'Parse error: the body is not valid JSON.')),
            );
          else done(null, value);
        });
      });
      mcp.setErrorHandler((err, req, reply) => this.#error(err as Error, req, reply, path));
      const config = { scope: 'mcp' as const };
      mcp.post('/mcp', { config, bodyLimit: MCP_BODY_LIMIT }, async (req, reply) =>
        (await this.#load()).post(req, reply),
      );
      mcp.get('/mcp', { config }, async (req, reply) => (await this.#load()).get(req, reply));
      mcp.delete('/mcp', { config }, async (req, reply) => (await this.#load()).delete(req, reply));
    });
  }

  /** Protected Resource Metadata for each endpoint path, so OAuth-probing clients learn it takes bearer keys. */
  registerMetadata(app: FastifyInstance, prefixes: readonly string[]): void {
    for (const prefix of prefixes) {
      const path = `${prefix}/mcp`;
      app.get(metadataPath(path), async (req, reply) => {
        await reply.header('cache-control', 'public, max-age=3600').send({
          resource: `${originOf(req)}${path}`,
          bearer_methods_supported: ['header'],
          resource_name: 'Switchyard MCP gateway',
          scopes_supported: ['mcp'],
        });
      });
    }
  }

  #error(
    err: FastifyError | Error,
    req: FastifyRequest,
    reply: FastifyReply,
    path: string,
  ): Promise<void> | FastifyReply {
    if (err instanceof RpcRefusal) return reply.code(err.httpStatus).type('application/json').send(err.body);
    const code = (err as FastifyError).code;
    if (code === 'FST_ERR_CTP_BODY_TOO_LARGE')
      return reply
        .code(413)
        .type('application/json')
        .send(rpcError(null, RPC.invalidRequest, `The message is larger than ${MCP_BODY_LIMIT} bytes.`));
    if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' || code === 'FST_ERR_CTP_EMPTY_JSON_BODY')
      return reply
        .code(400)
        .type('application/json')
        .send(rpcError(null, RPC.parseError, 'Parse error: send one JSON-RPC message as application/json.'));
    if (err instanceof GatewayError && (err.status === 401 || err.status === 403)) {
      const meta = `resource_metadata="${originOf(req)}${metadataPath(path)}"`;
      reply.header(
        'www-authenticate',
        err.status === 401 ? `Bearer ${meta}` : `Bearer error="insufficient_scope", scope="mcp", ${meta}`,
      );
    }
    return sendError(err, req, reply);
  }

  async close(): Promise<void> {
    const endpoint = this.#endpoint;
    this.#endpoint = undefined;
    if (endpoint) await (await endpoint).close();
    await this.#deps.sessions.close();
  }
}
