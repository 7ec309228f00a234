import type { FastifyReply } from 'fastify';
import { GatewayError } from '../errors/index.ts';
import type { Exchange } from '../pipeline/exchange.ts';
import type { PipelineResult } from '../pipeline/result.ts';
import type { CanonicalResult } from '../providers/types.ts';
import { serviceHeaders } from './meta.ts';

/**
 * A non-streamed answer on the surfaces where a provider failure is an error status (the OpenAI
 * endpoints, Responses, Messages; the native surface carries it in its body instead): the failure
 * is thrown as a 502 `upstream_error`, which the surface's error encoder writes in its shape; an
 * answer sets the x-service-* headers and its result goes to the endpoint's renderer (chat
 * completion, response, message, embeddings list, image list, audio).
 */
export function resultOrUpstreamError(
  reply: FastifyReply,
  ex: Exchange,
  result: Extract<PipelineResult, { kind: 'answered' | 'failed' }>,
): CanonicalResult {
  if (result.kind === 'failed')
    throw new GatewayError(
      'upstream_error',
      `The provider returned an error: ${result.failure.providerMessage}`,
    );
  reply.headers(serviceHeaders(ex, result, { duration: true }));
  return result.answer.result;
}
