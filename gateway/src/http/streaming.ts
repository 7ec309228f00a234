import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/index.ts';
import type { Prepared } from '../pipeline/prepare.ts';
import type { ChatRequest, CompletionRequest, StreamEvent, Usage } from '../providers/types.ts';
import { type ChunkContext, chunkFor, usageChunk } from '../responses/chunks.ts';
import { wrappedError } from '../responses/native.ts';
import { SseWriter } from '../responses/sse.ts';
import { toUpstreamError } from '../routing/execute.ts';
import { openStream } from '../routing/stream.ts';
import { checkStructured } from '../structured/validate.ts';
import { clientAbortSignal } from './context.ts';

export interface StreamOptions {
  /** Compatible surface: send the final usage chunk only when the client asked (stream_options.include_usage). */
  includeUsage?: boolean;
}

/**
 * Streams with failover until the first event. Before that, failures answer like a non-streamed
 * request; after it, they end the stream with an explicit error event, never a silent [DONE].
 */
export async function streamResponse(
  req: FastifyRequest,
  reply: FastifyReply,
  p: Prepared,
  surface: 'native' | 'compat',
  opts: StreamOptions = {},
): Promise<FastifyReply> {
  req.record.stream = true;
  const signal = clientAbortSignal(reply.raw);
  const opened = await openStream(p.plan, p.request as ChatRequest | CompletionRequest, signal);
  req.record.attempts = opened.attempts;
  const base = {
    workflow: p.workflowName,
    requested_provider: p.requestedProvider,
    requested_model: p.requestedModel,
    structured_output: p.plan.structured !== undefined || p.plan.json,
    request_log_id: req.id,
  };
  if (!opened.ok) {
    req.record.outcome = 'upstream_error';
    if (surface === 'compat')
      throw new GatewayError(
        'upstream_error',
        `The provider returned an error: ${opened.error.providerMessage || opened.error.message}`,
      );
    const duration_ms = Math.round(performance.now() - req.startedAt);
    return reply
      .code(200)
      .send(
        wrappedError(
          opened.error,
          { ...base, duration_ms, attempts: opened.attempts },
          p.backups,
          p.customerData,
        ),
      );
  }

  const { slot } = opened;
  Object.assign(req.record, { usedProvider: slot.provider, usedModel: slot.model });
  reply.hijack();
  const sse = new SseWriter(reply.raw, {
    'x-service-workflow': p.workflowName ?? '',
    'x-service-used-provider': slot.provider,
    'x-service-used-model': slot.model,
    'x-service-request-log-id': req.id,
  });
  const ctx: ChunkContext = {
    id: `chatcmpl-${req.id}`,
    created: Math.floor(Date.now() / 1000),
    model: p.workflowName ?? p.requestedModel,
  };
  if (surface === 'native')
    sse.event('metadata', {
      workflow: p.workflowName,
      session_id: null,
      used_provider: slot.provider,
      used_model: slot.model,
      request_log_id: req.id,
    });

  let usage: Usage | undefined;
  let first = true;
  let text = '';
  const emit = (ev: StreamEvent): void => {
    if (ev.type === 'usage') {
      usage = ev.usage;
      return;
    }
    if (ev.type === 'delta' && ev.content) text += ev.content;
    const chunk = chunkFor(ctx, ev, first);
    if (chunk) {
      if (first) req.record.ttftMs = performance.now() - req.startedAt;
      first = false;
      sse.data(chunk);
    }
  };

  let failure: { message: string; code: string } | undefined;
  try {
    emit(opened.first);
    for (;;) {
      const next = await opened.rest.next();
      if (next.done) break;
      emit(next.value);
    }
    if (p.plan.structured || p.plan.json) {
      const check = checkStructured(text, p.plan.structured?.schema);
      if (!check.ok) failure = { message: check.message, code: 'UPSTREAM_BAD_RESPONSE' };
    }
  } catch (err) {
    const e = toUpstreamError(err);
    failure = { message: e.providerMessage || e.message, code: e.code };
  }
  const attempt = opened.attempts[opened.attempts.length - 1]!;
  attempt.duration_ms = Math.round(performance.now() - opened.started);
  if (usage) req.record.usage = { ...usage };

  if (failure) {
    Object.assign(attempt, { status: 'error', reason: { message: failure.message, code: failure.code } });
    req.record.outcome = signal.aborted ? 'aborted' : 'stream_error';
    const error = {
      message: `The stream failed after it started: ${failure.message}`,
      type: 'api_error',
      code: 'upstream_error',
      param: null,
    };
    if (surface === 'native') sse.event('error', { error });
    else sse.data({ error });
    sse.end();
    return reply;
  }
  req.record.outcome = 'success';
  if (surface === 'compat' && opts.includeUsage && usage) sse.data(usageChunk(ctx, usage));
  if (surface === 'native')
    sse.event('meta', {
      status: 'success',
      http_status: 200,
      ...base,
      used_provider: slot.provider,
      used_model: slot.model,
      duration_ms: Math.round(performance.now() - req.startedAt),
      usage: usage ?? {},
      attempts: opened.attempts,
    });
  sse.done();
  return reply;
}
