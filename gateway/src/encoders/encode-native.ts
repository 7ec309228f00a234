import type { FastifyReply } from 'fastify';
import type { Exchange } from '../pipeline/exchange.ts';
import type { PipelineResult } from '../pipeline/result.ts';
import { nativeData } from './data.ts';
import { nativeMeta, serviceHeaders } from './meta.ts';
import type { WrappedBody } from './native.ts';

type Finished = Extract<PipelineResult, { kind: 'answered' | 'failed' }>;

/** `data` of a native answer: the structured value, or the request type's data shape. */
export function dataOf(result: Extract<PipelineResult, { kind: 'answered' }>): unknown {
  const p = result.prepared;
  return nativeData(
    result.answer.result,
    p.workflowName ?? p.requestedModel,
    Math.floor(Date.now() / 1000),
    result.answer.structured,
  );
}

/** The wrapped body: native `format: wrapped`, native provider failures, and async job results. */
export function wrappedBody(ex: Exchange, result: Finished): WrappedBody {
  const p = result.prepared;
  const meta = nativeMeta(ex, result);
  if (result.kind === 'failed') {
    const f = result.failure;
    return {
      data: null,
      customer_data: p.customerData,
      error: {
        message: f.message,
        details: { status: f.upstreamStatus ?? meta.http_status, message: f.providerMessage },
      },
      meta,
      backups: p.backups,
    };
  }
  return { data: dataOf(result), customer_data: p.customerData, meta, backups: p.backups };
}

/**
 * Native sync answers. A valid request whose providers all failed answers HTTP 200 with the wrapped
 * error body, whatever the format; `raw` sends `data` alone. Every answer carries the x-service-*
 * headers (and x-ratelimit-* where limits apply), so clients of either format read them alike.
 */
export function encodeNative(
  reply: FastifyReply,
  ex: Exchange,
  result: Finished,
  format: 'raw' | 'wrapped',
): FastifyReply {
  reply.headers(serviceHeaders(ex, result, { duration: true }));
  if (result.kind === 'failed' || format === 'wrapped') return reply.code(200).send(wrappedBody(ex, result));
  const data = dataOf(result);
  // A structured answer may be any JSON value: fastify would send a string as text/plain, unquoted.
  if (data === null || typeof data !== 'object')
    return reply.type('application/json; charset=utf-8').send(JSON.stringify(data));
  return reply.send(data);
}
