import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { errorBody, GatewayError, InternalError } from '../errors/index.ts';
import type { HttpSurface } from './context.ts';

/** Fastify's own errors (body parsing, limits) in our vocabulary. */
function fromFastify(err: FastifyError): GatewayError | undefined {
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new GatewayError('invalid_json', 'The request body is not valid JSON.', {
        hint: 'Send a JSON object body.',
      });
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new GatewayError('payload_too_large', 'The request body is too large.');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new GatewayError('uri_too_long', 'A path segment of the URL is too long.', {
        hint: 'Names in paths are at most a few hundred characters.',
      });
    case 'FST_ERR_BAD_URL':
      return new GatewayError(
        'invalid_request',
        'The URL is not valid: a path segment is not well-formed percent-encoding.',
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new GatewayError('unsupported_media_type', 'Unsupported Content-Type.', {
        hint: 'Send Content-Type: application/json.',
      });
    default:
      if (err instanceof SyntaxError || err.statusCode === 400)
        return new GatewayError('invalid_json', 'The request body is not valid JSON.', {
          hint: 'Send a JSON object body.',
        });
      if (err.statusCode === 413)
        return new GatewayError('payload_too_large', 'The request body is too large.');
      if (err.statusCode === 415)
        return new GatewayError('unsupported_media_type', 'Unsupported Content-Type.');
      return undefined;
  }
}

/**
 * OpenAI API paths, served or not: an SDK that calls one we do not serve (`completions.create`,
 * `responses.create`, ...) gets the OpenAI-shaped 404 `unknown_url` it can parse.
 */
const COMPAT_PATH =
  /^\/(?:api\/)?v1\/(?:chat|completions|responses|models|embeddings|images|audio|moderations|files|uploads|batches|fine_tuning|assistants|threads|vector_stores|realtime|conversations|provider-models)(?:[/?]|$)/;

/** Anthropic API paths: an unknown one gets the Anthropic-shaped 404 its SDK parses. */
const MESSAGES_PATH = /^\/(?:api\/)?v1\/messages(?:[/?]|$)/;

export function surfaceOf(req: FastifyRequest): HttpSurface {
  const routed = req.routeOptions.config?.surface;
  if (routed) return routed;
  if (MESSAGES_PATH.test(req.url)) return 'messages';
  return COMPAT_PATH.test(req.url) ? 'compat' : 'native';
}

/**
 * The one place errors become HTTP responses. The gateway's own failures (InternalError, and any
 * exception nothing classified) are logged with their stack and answered 503, never 500.
 */
export function sendError(err: unknown, req: FastifyRequest, reply: FastifyReply): FastifyReply {
  const ge =
    (err instanceof GatewayError
      ? err
      : err instanceof Error
        ? fromFastify(err as FastifyError)
        : undefined) ?? new InternalError(err, req.id);
  if (ge instanceof InternalError)
    req.log.error({ err: ge.cause ?? ge, request_log_id: req.id }, 'internal error');
  // The error encoder is where refusals are recorded (a failed chain's own record wins at settle).
  req.refusal = ge;
  if (ge.retryAfterSeconds !== undefined) void reply.header('retry-after', String(ge.retryAfterSeconds));
  if (ge.headers) void reply.headers(ge.headers);
  return reply.code(ge.status).send(errorBody(surfaceOf(req), ge));
}

/**
 * Fastify's `frameworkErrors`: errors raised before a route is matched (a malformed or over-long
 * URL), answered through sendError like every other error rather than in Fastify's own shape.
 */
export function sendFrameworkError(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  // No onRequest hook ran for these requests.
  if (!req.startedAt) req.startedAt = performance.now();
  void sendError(err, req, reply);
}
