import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GatewayMetrics } from '../observability/metrics.ts';
import type { Ending } from '../pipeline/finished.ts';
import { type Settle, settleEnd } from '../pipeline/settle.ts';
import { NO_TRACE } from '../tracing/off.ts';

/** An HTTP request's end as the transport saw it; what the pipeline established is its exchange's. */
function endingOf(req: FastifyRequest, reply: FastifyReply, aborted: boolean): Ending {
  return {
    id: req.id,
    // Routes without a surface (reads, the console) are counted as `other` and not request-logged.
    surface: req.logAs?.surface ?? req.routeOptions.config?.surface ?? 'other',
    type: req.logAs?.type ?? 'request',
    method: req.method,
    path: req.url.split('?')[0] ?? req.url,
    httpStatus: reply.statusCode,
    project: req.auth?.project,
    keyId: req.auth?.key.keyId,
    error: req.refusal ?? undefined,
    aborted,
    channelId: req.logAs?.channelId,
    details: req.logAs?.details,
    body: req.body,
    trace: req.trace ?? NO_TRACE,
  };
}

/** Settles an HTTP request: `aborted` when its client went away before the response finished. */
export type SettleRequest = (req: FastifyRequest, reply: FastifyReply, aborted: boolean) => void;

/**
 * The one place an HTTP request is settled, whether or not it opened an exchange (a refusal before
 * one, a read, a 404 are settled too): called when its response finished or, first, when its client
 * went away (a dropped stream, a timeout on a slow upstream), which would otherwise leave it "in
 * flight" and unsettled forever. Exactly once per request; it also releases the in-flight slot.
 */
export function requestSettle(settle: Settle, metrics: GatewayMetrics): SettleRequest {
  return (req, reply, aborted) => {
    // A decorated flag, not a WeakSet: WeakSet.add cost ~0.6 % of the gateway's CPU under load.
    if (req.accounted) return;
    req.accounted = true;
    if (req.routeOptions.config?.scope) metrics.inFlight.dec(req.routeOptions.config.surface ?? 'other');
    settleEnd(settle, endingOf(req, reply, aborted), req.startedAt, req.exchange?.progress);
  };
}
