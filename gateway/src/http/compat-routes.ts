import multipart from '@fastify/multipart';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RequestType } from '#contract';
import { chatCompletion, nativeData } from '../encoders/data.ts';
import { encodeCompletionStream, textCompletion } from '../encoders/encode-completions.ts';
import { encodeStream } from '../encoders/encode-stream.ts';
import { resultOrUpstreamError } from '../encoders/result-or-upstream-error.ts';
import type { Pipeline } from '../pipeline/run.ts';
import type { CanonicalResult } from '../providers/types.ts';
import { compatChatToNative, rejectUnsupported } from '../requests/compat-chat.ts';
import { compatCompletionToNative, rejectUnsupportedCompletion } from '../requests/compat-completion.ts';
import { compatEmbedding, compatImage, compatSpeech } from '../requests/compat-media.ts';
import { compatChatBody, compatCompletionBody } from '../requests/compat-schema.ts';
import { LIMITS } from '../requests/limits.ts';
import type { NativeBody } from '../requests/native-schema.ts';
import { parseBody } from '../requests/zod-error.ts';
import { compatibleAuth, modelWorkflow } from './compatible-switch.ts';
import { serve } from './context.ts';
import { modelObject, providerModels } from './models.ts';
import { readTranscriptionForm } from './transcription-form.ts';

const CHAT_TYPES: readonly RequestType[] = ['chat', 'vision'];
const COMPLETION_TYPES: readonly RequestType[] = ['completion'];

/**
 * The OpenAI-compatible surface: each endpoint parses its body into the native vocabulary, runs the
 * one pipeline, and renders the result in OpenAI's shape for that endpoint.
 */
export function compatRoutes(app: FastifyInstance, pipeline: Pipeline): void {
  /** Runs a non-streamed request of one of `allowed` types (the handler has passed compatAuth). */
  const answer = async (
    req: FastifyRequest,
    reply: FastifyReply,
    body: NativeBody,
    allowed: readonly RequestType[],
  ): Promise<CanonicalResult> => {
    const { ex, result } = await serve(pipeline, req, reply, 'compat', {
      body,
      stream: false,
      compat: { allowed },
    });
    if (result.kind === 'streaming') throw new Error('a sync request produced a stream');
    return resultOrUpstreamError(reply, ex, result);
  };

  const chat = async (req: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    compatibleAuth(req);
    rejectUnsupported(req.body);
    const body = parseBody(compatChatBody, req.body);
    const native = compatChatToNative(body);
    if (body.stream) {
      const { ex, result } = await serve(pipeline, req, reply, 'compat', {
        body: native,
        stream: true,
        compat: { allowed: CHAT_TYPES },
      });
      if (result.kind === 'streaming')
        return encodeStream(reply, ex, result, {
          dialect: 'compat',
          includeUsage: body.stream_options?.include_usage === true,
        });
      resultOrUpstreamError(reply, ex, result);
      throw new Error('a stream request produced a plain answer');
    }
    const result = await answer(req, reply, native, CHAT_TYPES);
    if (result.kind !== 'chat') throw new Error(`unexpected ${result.kind} result for chat`);
    return reply.send(chatCompletion(result, body.model, Math.floor(Date.now() / 1000)));
  };

  const completions = async (req: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    compatibleAuth(req);
    rejectUnsupportedCompletion(req.body);
    const body = parseBody(compatCompletionBody, req.body);
    const native = compatCompletionToNative(body);
    if (body.stream) {
      const { ex, result } = await serve(pipeline, req, reply, 'compat', {
        body: native,
        stream: true,
        compat: { allowed: COMPLETION_TYPES },
      });
      if (result.kind === 'streaming')
        return encodeCompletionStream(reply, ex, result, body.stream_options?.include_usage === true);
      resultOrUpstreamError(reply, ex, result);
      throw new Error('a stream request produced a plain answer');
    }
    const result = await answer(req, reply, native, COMPLETION_TYPES);
    if (result.kind !== 'completion') throw new Error(`unexpected ${result.kind} result for completions`);
    return reply.send(textCompletion(result, body.model, Math.floor(Date.now() / 1000)));
  };

  const embeddings = async (req: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    compatibleAuth(req);
    const { body, native } = compatEmbedding(req.body);
    const result = await answer(req, reply, native, ['embedding']);
    const data = nativeData(result, body.model, 0, undefined) as Record<string, unknown>;
    return reply.send({ ...data, model: body.model });
  };

  const images = async (req: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    compatibleAuth(req);
    const { model, native } = compatImage(req.body);
    const result = await answer(req, reply, native, ['image']);
    return reply.send(nativeData(result, model, 0, undefined));
  };

  const speech = async (req: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    compatibleAuth(req);
    const result = await answer(req, reply, compatSpeech(req.body), ['audio']);
    if (result.kind !== 'speech') throw new Error(`unexpected ${result.kind} result for speech`);
    return reply.header('content-type', result.contentType).send(Buffer.from(result.audio));
  };

  const transcription = async (req: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    compatibleAuth(req);
    const form = await readTranscriptionForm(req);
    const result = await answer(req, reply, form.body, ['audio']);
    if (result.kind !== 'transcription')
      throw new Error(`unexpected ${result.kind} result for transcription`);
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
  };

  const config = { surface: 'compat', scope: 'ai' } as const;
  app.post('/chat/completions', { config, bodyLimit: LIMITS.chatBodyBytes }, chat);
  app.post('/completions', { config, bodyLimit: LIMITS.chatBodyBytes }, completions);
  app.post('/embeddings', { config, bodyLimit: LIMITS.chatBodyBytes }, embeddings);
  app.post('/images/generations', { config }, images);
  app.post('/audio/speech', { config }, speech);
  // The multipart parser and its hooks only where an upload is expected (an encapsulated context):
  // every other route answers a multipart body 415 and runs none of its per-request hooks.
  void app.register(async (uploads) => {
    await uploads.register(multipart, { attachFieldsToBody: false });
    uploads.post(
      '/audio/transcriptions',
      { config, bodyLimit: LIMITS.audioFileBytes + 1024 * 1024 },
      transcription,
    );
  });
  app.get('/models', { config }, async (req) => {
    const auth = compatibleAuth(req);
    return { object: 'list', data: [...auth.project.workflows.values()].map(modelObject) };
  });
  app.get('/models/:model', { config }, async (req) => {
    const auth = compatibleAuth(req);
    const name = (req.params as { model: string }).model;
    const wf = modelWorkflow(auth, name);
    return modelObject(wf);
  });
  app.get('/provider-models', { config }, async (req) => providerModels(compatibleAuth(req).project));
}
