import type { FastifyReply } from 'fastify';
import type { Exchange } from '../pipeline/exchange.ts';
import type { Outcome } from '../pipeline/outcome.ts';
import { nativeData } from './data.ts';
import { nativeMeta, serviceHeaders } from './meta.ts';
import type { WrappedBody } from './native.ts';

type Finished = Exclude<Outcome, { kind: 'streaming' }>;

/** `data` of a native answer: the structured value, or the request type's data shape. */
export function dataOf(outcome: Extract<Outcome, { kind: 'answered' }>): unknown {
  const p = outcome.prepared;
  return nativeData(
    outcome.result,
    p.workflowName ?? p.requestedModel,
    Math.floor(Date.now() / 1000),
    outcome.structured,
  );
}

/** The wrapped body: native `format: wrapped`, native provider failures, and async job results. */
export function wrappedBody(ex: Exchange, outcome: Finished): WrappedBody {
  const p = outcome.prepared;
  const meta = nativeMeta(ex, outcome);
  if (outcome.kind === 'failed') {
    const e = outcome.error;
    return {
      data: null,
      customer_data: p.customerData,
      error: {
        message: e.message,
        details: { status: e.status ?? meta.http_status, message: e.providerMessage || e.message },
      },
      meta,
      backups: p.backups,
    };
  }
  return { data: dataOf(outcome), customer_data: p.customerData, meta, backups: p.backups };
}

/**
 * Native sync answers. A valid request whose providers all failed answers HTTP 200 with the wrapped
 * error body, whatever the format; `raw` sends `data` alone. Every answer carries the x-service-*
 * headers (and x-ratelimit-* where limits apply), so clients of either format read them alike.
 */
export function encodeNative(
  reply: FastifyReply,
  ex: Exchange,
  outcome: Finished,
  format: 'raw' | 'wrapped',
): FastifyReply {
  reply.headers(serviceHeaders(ex, outcome, { duration: true }));
  if (outcome.kind === 'failed' || format === 'wrapped')
    return reply.code(200).send(wrappedBody(ex, outcome));
  return reply.send(dataOf(outcome));
}
