import type { FastifyReply } from 'fastify';
import { GatewayError } from '../errors/index.ts';
import type { Exchange } from '../pipeline/exchange.ts';
import type { PipelineResult } from '../pipeline/result.ts';
import type { CanonicalResult } from '../providers/types.ts';
import { serviceHeaders } from './meta.ts';

/**
 * The compatible surface's answer: a provider failure is a 502 `upstream_error` in the OpenAI
 * envelope (thrown to the one error encoder); success sets the x-service-* headers and hands the
 * result to the endpoint's renderer (chat completion, embeddings list, image list, audio).
 */
export function compatResult(
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
