/**
 * Vertex AI adapter: Gemini models (chat, vision, completion, embeddings, Imagen images,
 * transcription) and Anthropic's Claude models (chat, vision, completion), authenticated with an
 * OAuth access token (service-account key or workload identity, see ../auth). Claude takes the
 * Messages API body, so a native Messages request passes through as on the anthropic type.
 */
import { badResponse, UpstreamError, unsupported } from '../../upstream/errors.ts';
import { readJson, type SendOptions, send } from '../../upstream/http.ts';
import { isNativeMessages, nativeHeaders } from '../anthropic/native.ts';
import { anthropicBody } from '../anthropic/request.ts';
import { parseAnthropicMessage } from '../anthropic/response.ts';
import { AnthropicStreamMapper } from '../anthropic/stream.ts';
import { chatToCompletion, floatsToBase64, runStream, usageOf } from '../common.ts';
import {
  buildImageGenerateBody,
  buildImagenBody,
  buildTranscriptionBody,
  isImagen,
  parseGeneratedImage,
  parseImagen,
  parseTranscription,
} from '../gemini/media.ts';
import { buildGeminiGenerateBody } from '../gemini/request.ts';
import { parseGeminiChat } from '../gemini/response.ts';
import { GeminiStreamMapper } from '../gemini/stream.ts';
import type {
  CallContext,
  CanonicalRequest,
  CanonicalResult,
  ChatRequest,
  CompletionRequest,
  EmbeddingRequest,
  EmbeddingResult,
  ProviderAdapter,
  RequestKind,
  StreamEvent,
  UpstreamTarget,
} from '../types.ts';
import { vertexStatusError } from './errors.ts';
import {
  buildVertexEmbedBodies,
  publisherOf,
  VERTEX_ANTHROPIC_VERSION,
  type VertexOp,
  vertexUrl,
} from './request.ts';

const KINDS = new Set<RequestKind>(['chat', 'completion', 'embedding', 'image', 'transcription']);
const CLAUDE_KINDS = new Set<RequestKind>(['chat', 'completion']);

function check(target: UpstreamTarget, kind: RequestKind): void {
  if (!KINDS.has(kind)) throw unsupported(`vertex-ai does not support ${kind} requests`);
  if (publisherOf(target.model) === 'anthropic' && !CLAUDE_KINDS.has(kind))
    throw unsupported(`vertex-ai serves Claude models for chat and completion only, not ${kind}`);
}

async function authorized(
  target: UpstreamTarget,
  op: VertexOp,
  body: string,
  ctx: CallContext,
  headers: Record<string, string> = {},
): Promise<SendOptions> {
  const { signal } = ctx;
  const auth = target.auth;
  if (auth?.kind !== 'bearer')
    throw new UpstreamError('vertex-ai provider has no Google credentials', {
      code: 'UPSTREAM_STATUS',
      status: 401,
      providerMessage: 'vertex-ai provider has no Google credentials',
    });
  let token: string;
  try {
    token = await auth.token(signal);
  } catch (err) {
    if (signal.aborted)
      throw new UpstreamError('client aborted the request', {
        code: 'UPSTREAM_ABORTED',
        providerMessage: 'client aborted the request',
      });
    throw err;
  }
  return {
    target,
    url: vertexUrl(target, op),
    headers: { ...headers, 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body,
    signal,
    trace: ctx.trace,
  };
}

async function post(
  target: UpstreamTarget,
  op: VertexOp,
  body: string,
  ctx: CallContext,
  headers?: Record<string, string>,
): Promise<unknown> {
  const res = await send(await authorized(target, op, body, ctx, headers));
  if (res.status < 200 || res.status >= 300) throw await vertexStatusError(res);
  return readJson(res);
}

function claudeBody(target: UpstreamTarget, req: ChatRequest | CompletionRequest, stream: boolean): string {
  const { model: _model, ...body } = anthropicBody(target, req, stream);
  return JSON.stringify({ anthropic_version: VERTEX_ANTHROPIC_VERSION, ...body });
}

interface Prediction {
  embeddings?: { values?: number[]; statistics?: { token_count?: number } };
}

async function embed(
  target: UpstreamTarget,
  req: EmbeddingRequest,
  ctx: CallContext,
): Promise<EmbeddingResult> {
  const answers = await Promise.all(
    buildVertexEmbedBodies(target.model, req).map((b) => post(target, 'predict', b, ctx)),
  );
  const vectors: number[][] = [];
  let tokens = 0;
  for (const a of answers) {
    const predictions = (a as { predictions?: Prediction[] } | null)?.predictions;
    if (!Array.isArray(predictions)) throw badResponse('upstream embedding answer has no predictions');
    for (const p of predictions) {
      if (!Array.isArray(p.embeddings?.values))
        throw badResponse('upstream prediction has no embedding values');
      vectors.push(p.embeddings.values);
      tokens += p.embeddings.statistics?.token_count ?? 0;
    }
  }
  return {
    kind: 'embedding',
    embeddings: req.encoding_format === 'base64' ? vectors.map(floatsToBase64) : vectors,
    usage: usageOf(tokens, 0),
    model: target.model,
  };
}

function streamImpl(
  target: UpstreamTarget,
  req: ChatRequest | CompletionRequest,
  ctx: CallContext,
): AsyncIterable<StreamEvent> {
  const claude = publisherOf(target.model) === 'anthropic';
  return runStream(
    () => {
      check(target, req.kind);
      return claude
        ? authorized(target, 'streamRawPredict', claudeBody(target, req, true), ctx, nativeHeaders(req))
        : authorized(target, 'streamGenerateContent', buildGeminiGenerateBody(req, target.model), ctx);
    },
    vertexStatusError,
    claude ? new AnthropicStreamMapper(isNativeMessages(req)) : new GeminiStreamMapper(),
  );
}

export const vertexAdapter: ProviderAdapter = {
  type: 'vertex-ai',
  // Gemini models take the schema natively; Claude models get it as an instruction (see anthropicBody).
  supportsNativeStructuredOutput: true,
  supports: (kind) => KINDS.has(kind),
  speaks: (dialect, target) => dialect === 'anthropic-messages' && publisherOf(target.model) === 'anthropic',

  async call(target: UpstreamTarget, req: CanonicalRequest, ctx: CallContext): Promise<CanonicalResult> {
    check(target, req.kind);
    switch (req.kind) {
      case 'embedding':
        return embed(target, req, ctx);
      case 'image': {
        const imagen = isImagen(target.model);
        const json = await post(
          target,
          imagen ? 'predict' : 'generateContent',
          imagen ? buildImagenBody(req) : buildImageGenerateBody(req),
          ctx,
        );
        return imagen ? parseImagen(json, req) : parseGeneratedImage(json, req);
      }
      case 'transcription':
        return parseTranscription(
          await post(target, 'generateContent', buildTranscriptionBody(req), ctx),
          req,
        );
      case 'chat':
      case 'completion': {
        const chat =
          publisherOf(target.model) === 'anthropic'
            ? parseAnthropicMessage(
                await post(target, 'rawPredict', claudeBody(target, req, false), ctx, nativeHeaders(req)),
                target.model,
                isNativeMessages(req),
              )
            : parseGeminiChat(
                await post(target, 'generateContent', buildGeminiGenerateBody(req, target.model), ctx),
                target.model,
              );
        return req.kind === 'completion' ? chatToCompletion(chat) : chat;
      }
      default:
        throw unsupported(`vertex-ai: ${req.kind}`);
    }
  },

  stream: (target, req, ctx) => streamImpl(target, req, ctx),
};
