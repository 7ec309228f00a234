/**
 * Gemini (Generative Language API) adapter: chat, completion (as one user turn), embeddings, images
 * (Imagen and Gemini image models) and transcription (see media.ts).
 */
import { unsupported } from '../../upstream/errors.ts';
import { readJson, send } from '../../upstream/http.ts';
import { chatToCompletion, requestKinds, runStream } from '../common.ts';
import type {
  CallContext,
  CanonicalRequest,
  CanonicalResult,
  ChatRequest,
  CompletionRequest,
  ProviderAdapter,
  StreamEvent,
  UpstreamTarget,
} from '../types.ts';
import { geminiStatusError } from './errors.ts';
import {
  buildImageGenerateBody,
  buildImagenBody,
  buildTranscriptionBody,
  isImagen,
  parseGeneratedImage,
  parseImagen,
  parseTranscription,
} from './media.ts';
import { buildGeminiEmbedBody, buildGeminiGenerateBody, geminiHeaders, geminiUrl } from './request.ts';
import { parseGeminiChat, parseGeminiEmbedding } from './response.ts';
import { GeminiStreamMapper } from './stream.ts';

const KINDS = requestKinds('gemini', ['chat', 'completion', 'embedding', 'image', 'transcription']);

function streamImpl(
  target: UpstreamTarget,
  req: ChatRequest | CompletionRequest,
  ctx: CallContext,
): AsyncIterable<StreamEvent> {
  return runStream(
    () => {
      KINDS.check(req.kind);
      return {
        target,
        url: geminiUrl(target, 'streamGenerateContent'),
        headers: geminiHeaders(target),
        body: buildGeminiGenerateBody(req, target.model),
        signal: ctx.signal,
        trace: ctx.trace,
      };
    },
    geminiStatusError,
    new GeminiStreamMapper(),
  );
}

export const geminiAdapter: ProviderAdapter = {
  type: 'gemini',
  supportsNativeStructuredOutput: true,
  supports: KINDS.supports,

  async call(target: UpstreamTarget, req: CanonicalRequest, ctx: CallContext): Promise<CanonicalResult> {
    KINDS.check(req.kind);
    if (req.kind === 'embedding') {
      const { op, body } = buildGeminiEmbedBody(target, req);
      const res = await send({
        target,
        url: geminiUrl(target, op),
        headers: geminiHeaders(target),
        body,
        signal: ctx.signal,
        trace: ctx.trace,
      });
      if (res.status < 200 || res.status >= 300) throw await geminiStatusError(res);
      return parseGeminiEmbedding(await readJson(res), req, target.model);
    }
    if (req.kind === 'image') {
      const imagen = isImagen(target.model);
      const res = await send({
        target,
        url: geminiUrl(target, imagen ? 'predict' : 'generateContent'),
        headers: geminiHeaders(target),
        body: imagen ? buildImagenBody(req) : buildImageGenerateBody(req),
        signal: ctx.signal,
        trace: ctx.trace,
      });
      if (res.status < 200 || res.status >= 300) throw await geminiStatusError(res);
      const json = await readJson(res);
      return imagen ? parseImagen(json, req) : parseGeneratedImage(json, req);
    }
    if (req.kind === 'transcription') {
      const res = await send({
        target,
        url: geminiUrl(target, 'generateContent'),
        headers: geminiHeaders(target),
        body: buildTranscriptionBody(req),
        signal: ctx.signal,
        trace: ctx.trace,
      });
      if (res.status < 200 || res.status >= 300) throw await geminiStatusError(res);
      return parseTranscription(await readJson(res), req);
    }
    if (req.kind !== 'chat' && req.kind !== 'completion') throw unsupported(`gemini: ${req.kind}`);
    const res = await send({
      target,
      url: geminiUrl(target, 'generateContent'),
      headers: geminiHeaders(target),
      body: buildGeminiGenerateBody(req, target.model),
      signal: ctx.signal,
      trace: ctx.trace,
    });
    if (res.status < 200 || res.status >= 300) throw await geminiStatusError(res);
    const chat = parseGeminiChat(await readJson(res), target.model);
    return req.kind === 'completion' ? chatToCompletion(chat) : chat;
  },

  stream: (target, req, ctx) => streamImpl(target, req, ctx),
};
