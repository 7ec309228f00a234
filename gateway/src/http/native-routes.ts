import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/index.ts';
import { type Prepared, prepare } from '../pipeline/prepare.ts';
import { LIMITS } from '../requests/limits.ts';
import { type NativeBody, nativeBody } from '../requests/native-schema.ts';
import { parseBody } from '../requests/zod-error.ts';
import { nativeData, usageOf } from '../responses/data.ts';
import { type NativeMeta, type WrappedBody, wrappedError } from '../responses/native.ts';
import { execute } from '../routing/execute.ts';
import { authOf, clientAbortSignal } from './context.ts';
import { streamResponse } from './streaming.ts';

function baseMeta(req: FastifyRequest, p: Prepared) {
  return {
    workflow: p.workflowName,
    requested_provider: p.requestedProvider,
    requested_model: p.requestedModel,
    duration_ms: Math.round(performance.now() - req.startedAt),
    structured_output: p.plan.structured !== undefined || p.plan.json,
    request_log_id: req.id,
  };
}

function prepareNative(req: FastifyRequest): { body: NativeBody; p: Prepared } {
  const auth = authOf(req);
  const body = parseBody(nativeBody, req.body);
  const p = prepare(auth, body, { compat: false });
  Object.assign(req.record, {
    workflow: p.workflowName,
    customerData: p.customerData,
    testMode: p.plan.testMode,
  });
  if (body.session_id)
    // No session of this project has this id (session memory arrives with its own issue).
    throw new GatewayError(
      'session_not_found',
      `Session "${body.session_id}" does not exist in this project.`,
      { param: 'session_id' },
    );
  return { body, p };
}

async function syncHandler(req: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  const { body, p } = prepareNative(req);
  if (p.eventName)
    throw new GatewayError(
      'model_not_supported',
      `Workflow "${p.workflowName}" is a backend-pipeline workflow (event "${p.eventName}") and runs only asynchronously.`,
      {
        param: 'workflow',
        hint: 'Use POST /v1/ai/async, or remove eventName from the workflow.',
      },
    );
  if (body.stream) return streamResponse(req, reply, p, 'native');

  const outcome = await execute(p.plan, p.request, clientAbortSignal(reply.raw));
  req.record.attempts = outcome.attempts;
  const wrapped = body.format === 'wrapped';
  if (!outcome.ok) {
    req.record.outcome = 'upstream_error';
    // A valid request whose providers all failed: HTTP 200 with the wrapped error body, whatever the format.
    return reply
      .code(200)
      .send(
        wrappedError(
          outcome.error,
          { ...baseMeta(req, p), attempts: outcome.attempts },
          p.backups,
          p.customerData,
        ),
      );
  }
  const { result, slot } = outcome;
  const data = nativeData(
    result,
    p.workflowName ?? p.requestedModel,
    Math.floor(Date.now() / 1000),
    outcome.structured,
  );
  const usage = usageOf(result);
  Object.assign(req.record, {
    usedProvider: slot.provider,
    usedModel: slot.model,
    usage,
    outcome: 'success',
  });
  const meta: NativeMeta = {
    status: 'success',
    http_status: 200,
    ...baseMeta(req, p),
    used_provider: slot.provider,
    used_model: slot.model,
    usage,
    attempts: outcome.attempts,
  };
  if (wrapped) {
    const out: WrappedBody = { data, customer_data: p.customerData, meta, backups: p.backups };
    return reply.send(out);
  }
  return reply
    .headers({
      'x-service-workflow': p.workflowName ?? '',
      'x-service-used-provider': slot.provider,
      'x-service-used-model': slot.model,
      'x-service-duration-ms': String(meta.duration_ms),
      'x-service-request-log-id': req.id,
    })
    .send(data);
}

export function nativeRoutes(app: FastifyInstance): void {
  app.post(
    '/ai',
    { config: { surface: 'native', scope: 'ai' }, bodyLimit: LIMITS.nativeBodyBytes },
    syncHandler,
  );
}
