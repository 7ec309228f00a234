import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Finished, finalResult } from '../pipeline/finished.ts';
import type { StreamEnd } from '../pipeline/result.ts';
import { NO_TRACE } from '../tracing/off.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** What a route adds to its request-log entry's details (e.g. the hosted tools it omitted). */
    logDetails?: Record<string, unknown> | undefined;
  }
}

/** An HTTP request as the one settle sees it: the transport's facts plus what the pipeline established. */
export function finishedOf(
  req: FastifyRequest,
  reply: FastifyReply,
  durationMs: number,
  aborted: boolean,
  end?: StreamEnd,
): Finished {
  const progress = req.exchange?.progress;
  return {
    id: req.id,
    // Routes without a surface (reads, the console) are counted as `other` and not request-logged.
    surface: req.logAs?.surface ?? req.routeOptions.config?.surface ?? 'other',
    type: req.logAs?.type ?? 'request',
    method: req.method,
    path: req.url.split('?')[0] ?? req.url,
    httpStatus: reply.statusCode,
    durationMs,
    project: req.auth?.project,
    keyId: req.auth?.key.keyId,
    prepared: progress?.prepared,
    notes: progress?.notes ?? {},
    result: finalResult(progress?.result, end),
    error: req.refusal ?? undefined,
    aborted,
    stream: progress?.stream ?? false,
    channelId: req.logAs?.channelId,
    body: req.body,
    ...(req.logDetails ? { details: req.logDetails } : {}),
    trace: req.trace ?? NO_TRACE,
  };
}
