import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RequestType } from '#contract';
import type { AuthContext } from '../auth/authenticate.ts';
import { GatewayError } from '../errors/index.ts';
import { type Prepared, prepare } from '../pipeline/prepare.ts';
import {
  compatChatBody,
  compatEmbeddingBody,
  compatImageBody,
  compatSpeechBody,
  UNSUPPORTED_CHAT_PARAMS,
} from '../requests/compat-schema.ts';
import { LIMITS } from '../requests/limits.ts';
import type { NativeBody } from '../requests/native-schema.ts';
import { parseBody } from '../requests/zod-error.ts';
import { chatCompletion, nativeData, usageOf } from '../responses/data.ts';
import { execute, type Outcome } from '../routing/execute.ts';
import { authOf, clientAbortSignal } from './context.ts';
import { modelObject, providerModels } from './models.ts';
import { streamResponse } from './streaming.ts';
import { readTranscriptionForm } from './transcription-form.ts';

/** Compatible-surface gate: the project switch, then an event workflow cannot answer synchronously. */
function compatAuth(req: FastifyRequest): AuthContext {
  const auth = authOf(req);
  if (!auth.project.config.compatibleApiEnabled)
    throw new GatewayError('feature_disabled', 'The OpenAI-compatible API is disabled for this project.', {
      hint: 'Set spec.compatibleApi.enabled: true on the Project.',
    });
  return auth;
}

function prepareCompat(
  req: FastifyRequest,
  auth: AuthContext,
  body: NativeBody,
  allowed: readonly RequestType[],
): Prepared {
  // Gate on the workflow before the body is checked against its request type, so that a client of
  // this endpoint hears "wrong endpoint for this model" (param `model`), not the native body rules.
  const wf = body.model === undefined ? undefined : auth.project.workflows.get(body.model);
  if (wf) {
    req.record.workflow = wf.config.name;
    if (wf.config.eventName)
      throw new GatewayError(
        'model_not_supported',
        `Workflow "${wf.config.name}" has an event name and cannot be used on this endpoint. Use the async endpoint (POST /v1/ai/async) or remove the event name.`,
      );
    if (!allowed.includes(wf.config.requestType))
      throw new GatewayError(
        'request_type_mismatch',
        `Workflow "${wf.config.name}" has request type ${wf.config.requestType}; this endpoint serves ${allowed.join(', ')}.`,
        { param: 'model' },
      );
  }
  const p = prepare(auth, body, { compat: true });
  Object.assign(req.record, {
    workflow: p.workflowName,
    customerData: p.customerData,
    testMode: p.plan.testMode,
  });
  return p;
}

async function run(
  req: FastifyRequest,
  reply: FastifyReply,
  p: Prepared,
): Promise<Extract<Outcome, { ok: true }>> {
  const outcome = await execute(p.plan, p.request, clientAbortSignal(reply.raw));
  req.record.attempts = outcome.attempts;
  if (!outcome.ok) {
    req.record.outcome = 'upstream_error';
    throw new GatewayError(
      'upstream_error',
      `The provider returned an error: ${outcome.error.providerMessage || outcome.error.message}`,
    );
  }
  Object.assign(req.record, {
    usedProvider: outcome.slot.provider,
    usedModel: outcome.slot.model,
    usage: usageOf(outcome.result),
    outcome: 'success',
  });
  reply.headers({
    'x-service-workflow': p.workflowName ?? '',
    'x-service-used-provider': outcome.slot.provider,
    'x-service-used-model': outcome.slot.model,
    'x-service-request-log-id': req.id,
  });
  return outcome;
}

function rejectUnsupported(raw: Record<string, unknown>): void {
  for (const name of UNSUPPORTED_CHAT_PARAMS) {
    const v = raw[name];
    if (v !== undefined && v !== null && v !== false)
      throw new GatewayError(
        'unsupported_parameter',
        `The parameter "${name}" is not supported by this gateway.`,
        { param: name },
      );
  }
  if (typeof raw.n === 'number' && raw.n > 1)
    throw new GatewayError('unsupported_parameter', 'n must be 1: one choice per request is supported.', {
      param: 'n',
    });
}

async function chatHandler(req: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  const auth = compatAuth(req);
  if (req.body && typeof req.body === 'object' && !Array.isArray(req.body))
    rejectUnsupported(req.body as Record<string, unknown>);
  const body = parseBody(compatChatBody, req.body);
  if (body.session_id)
    throw new GatewayError(
      'session_not_found',
      `Session "${body.session_id}" does not exist in this project.`,
      { param: 'session_id' },
    );
  const native: NativeBody = {
    model: body.model,
    messages: body.messages,
    ...(body.temperature !== undefined ? { temperature: body.temperature } : {}),
    ...((body.max_completion_tokens ?? body.max_tokens) !== undefined
      ? { max_tokens: body.max_completion_tokens ?? body.max_tokens }
      : {}),
    ...(body.top_p !== undefined ? { top_p: body.top_p } : {}),
    ...(body.stop !== undefined ? { stop: body.stop } : {}),
    ...(body.tools ? { tools: body.tools } : {}),
    ...(body.tool_choice !== undefined ? { tool_choice: body.tool_choice } : {}),
    ...(body.response_format ? { response_format: body.response_format } : {}),
    ...(body.metadata ? { metadata: body.metadata } : {}),
    ...(body.user ? { user: body.user } : {}),
    ...(body.stream ? { stream: true } : {}),
  };
  const p = prepareCompat(req, auth, native, ['chat', 'vision', 'completion']);
  if (body.stream)
    return streamResponse(req, reply, p, 'compat', {
      includeUsage: body.stream_options?.include_usage === true,
    });
  const { result } = await run(req, reply, p);
  if (result.kind !== 'chat' && result.kind !== 'completion')
    throw new Error(`unexpected ${result.kind} result for chat`);
  return reply.send(chatCompletion(result, body.model, Math.floor(Date.now() / 1000)));
}

async function embeddingsHandler(req: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  const auth = compatAuth(req);
  const body = parseBody(compatEmbeddingBody, req.body);
  const p = prepareCompat(req, auth, { ...body }, ['embedding']);
  const { result } = await run(req, reply, p);
  const data = nativeData(result, body.model, 0, undefined) as Record<string, unknown>;
  return reply.send({ ...data, model: body.model });
}

async function imagesHandler(req: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  const auth = compatAuth(req);
  const body = parseBody(compatImageBody, req.body);
  const p = prepareCompat(req, auth, { ...body }, ['image']);
  const { result } = await run(req, reply, p);
  return reply.send(nativeData(result, body.model, 0, undefined));
}

async function speechHandler(req: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  const auth = compatAuth(req);
  const body = parseBody(compatSpeechBody, req.body);
  const p = prepareCompat(req, auth, { ...body, voice: body.voice }, ['audio']);
  const { result } = await run(req, reply, p);
  if (result.kind !== 'speech') throw new Error(`unexpected ${result.kind} result for speech`);
  return reply.header('content-type', result.contentType).send(Buffer.from(result.audio));
}

async function transcriptionHandler(req: FastifyRequest, reply: FastifyReply): Promise<unknown> {
  const auth = compatAuth(req);
  const form = await readTranscriptionForm(req);
  const p = prepareCompat(req, auth, form.body, ['audio']);
  const { result } = await run(req, reply, p);
  if (result.kind !== 'transcription') throw new Error(`unexpected ${result.kind} result for transcription`);
  if (form.body.response_format === 'text')
    return reply.header('content-type', 'text/plain; charset=utf-8').send(result.text);
  if (form.body.response_format === 'verbose_json')
    return reply.send({
      task: 'transcribe',
      language: result.language ?? form.body.language ?? 'unknown',
      duration: result.durationSeconds ?? 0,
      text: result.text,
    });
  return reply.send({ text: result.text });
}

export function compatRoutes(app: FastifyInstance): void {
  const config = { surface: 'compat', scope: 'ai' } as const;
  app.post('/chat/completions', { config, bodyLimit: LIMITS.chatBodyBytes }, chatHandler);
  app.post('/embeddings', { config, bodyLimit: LIMITS.chatBodyBytes }, embeddingsHandler);
  app.post('/images/generations', { config }, imagesHandler);
  app.post('/audio/speech', { config }, speechHandler);
  app.post(
    '/audio/transcriptions',
    { config, bodyLimit: LIMITS.audioFileBytes + 1024 * 1024 },
    transcriptionHandler,
  );
  app.get('/models', { config }, async (req) => {
    const auth = compatAuth(req);
    return { object: 'list', data: [...auth.project.workflows.values()].map(modelObject) };
  });
  app.get('/models/:model', { config }, async (req) => {
    const auth = compatAuth(req);
    const name = (req.params as { model: string }).model;
    const wf = auth.project.workflows.get(name);
    if (!wf)
      throw new GatewayError(
        'workflow_not_found',
        `The model "${name}" does not exist: no workflow of this project has that name.`,
      );
    return modelObject(wf);
  });
  app.get('/provider-models', { config }, async (req) => providerModels(compatAuth(req).project));
}
