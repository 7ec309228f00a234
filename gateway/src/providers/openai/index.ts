/**
 * OpenAI adapter, and the factory the azure-openai and openai-compatible adapters are built from
 * (same bodies, parsing, streaming and error mapping; they only differ in URL, auth and dialect).
 */
import { BoundedMap } from '../../domain/bounded-map.ts';
import { unsupported } from '../../upstream/errors.ts';
import { readBytes, readJson, readText, send } from '../../upstream/http.ts';
import { runStream, trimSlash } from '../common.ts';
import type {
  CallContext,
  CanonicalRequest,
  CanonicalResult,
  ChatRequest,
  CompletionRequest,
  ProviderAdapter,
  ProviderType,
  RequestKind,
  StreamEvent,
  UpstreamTarget,
} from '../types.ts';
import { openaiStatusError } from './errors.ts';
import { buildOpenAIBody, isReasoningModel, OPENAI_OPERATIONS, type OpenAIDialect } from './request.ts';
import {
  audioContentType,
  parseOpenAIChat,
  parseOpenAICompletion,
  parseOpenAIEmbedding,
  parseOpenAIImage,
  parseOpenAITranscription,
} from './response.ts';
import { OpenAIStreamMapper } from './stream.ts';

export interface OpenAIStyleConfig {
  type: ProviderType;
  kinds: readonly RequestKind[];
  supportsNativeStructuredOutput: boolean;
  url(target: UpstreamTarget, kind: RequestKind): string;
  /** Headers for a request; `json` is false for multipart bodies (undici sets the boundary). */
  headers(target: UpstreamTarget, json: boolean): Record<string, string>;
  dialect(target: UpstreamTarget): OpenAIDialect;
  /** Optional per-target refusal of a kind (e.g. a compatible server known not to serve embeddings). */
  refuse?(target: UpstreamTarget, kind: RequestKind): string | undefined;
}

export function createOpenAIStyleAdapter(cfg: OpenAIStyleConfig): ProviderAdapter {
  const kinds = new Set<RequestKind>(cfg.kinds);
  const check = (target: UpstreamTarget, kind: RequestKind): void => {
    if (!kinds.has(kind)) throw unsupported(`${cfg.type} does not support ${kind} requests`);
    const why = cfg.refuse?.(target, kind);
    if (why !== undefined) throw unsupported(why);
  };

  return {
    type: cfg.type,
    supportsNativeStructuredOutput: cfg.supportsNativeStructuredOutput,
    supports: (kind) => kinds.has(kind),

    async call(target: UpstreamTarget, req: CanonicalRequest, ctx: CallContext): Promise<CanonicalResult> {
      check(target, req.kind);
      const body = buildOpenAIBody(req, target.model, cfg.dialect(target), false);
      const res = await send({
        target,
        url: cfg.url(target, req.kind),
        headers: cfg.headers(target, typeof body === 'string'),
        body,
        signal: ctx.signal,
        trace: ctx.trace,
      });
      if (res.status < 200 || res.status >= 300) throw await openaiStatusError(res);
      switch (req.kind) {
        case 'chat':
          return parseOpenAIChat(await readJson(res), target.model);
        case 'completion':
          return parseOpenAICompletion(await readJson(res), target.model);
        case 'embedding':
          return parseOpenAIEmbedding(await readJson(res), target.model);
        case 'image':
          return parseOpenAIImage(await readJson(res));
        case 'transcription':
          if (req.response_format === 'text')
            return { kind: 'transcription', text: (await readText(res)).trimEnd() };
          return parseOpenAITranscription(await readJson(res));
        case 'speech': {
          const format = req.response_format ?? 'mp3';
          const contentType = audioContentType(format, res.headers['content-type']);
          return { kind: 'speech', audio: await readBytes(res), format, contentType };
        }
      }
    },

    stream(
      target: UpstreamTarget,
      req: ChatRequest | CompletionRequest,
      ctx: CallContext,
    ): AsyncIterable<StreamEvent> {
      return runStream(
        () => {
          check(target, req.kind);
          return {
            target,
            url: cfg.url(target, req.kind),
            headers: cfg.headers(target, true),
            body: buildOpenAIBody(req, target.model, cfg.dialect(target), true),
            signal: ctx.signal,
            trace: ctx.trace,
          };
        },
        openaiStatusError,
        new OpenAIStreamMapper(),
      );
    },
  };
}

export const OPENAI_DIALECT: OpenAIDialect = {
  modelInBody: true,
  streamUsage: true,
  jsonSchema: true,
  developerRole: true,
  maxCompletionTokens: isReasoningModel,
};

export const ALL_KINDS: readonly RequestKind[] = [
  'chat',
  'completion',
  'embedding',
  'image',
  'transcription',
  'speech',
];

const urlCache = new BoundedMap<string, string>(10_000);

/** `${baseURL}/${operation}` with the trailing-slash trim cached per base URL. */
export function joinOperation(baseURL: string, kind: RequestKind): string {
  const key = `${kind} ${baseURL}`;
  let url = urlCache.get(key);
  if (url === undefined) {
    url = `${trimSlash(baseURL)}/${OPENAI_OPERATIONS[kind]}`;
    urlCache.set(key, url);
  }
  return url;
}

export function bearerHeaders(apiKey: string, json: boolean): Record<string, string> {
  const h: Record<string, string> = {};
  if (json) h['content-type'] = 'application/json';
  if (apiKey) h.authorization = `Bearer ${apiKey}`;
  return h;
}

export const openaiAdapter: ProviderAdapter = createOpenAIStyleAdapter({
  type: 'openai',
  kinds: ALL_KINDS,
  supportsNativeStructuredOutput: true,
  url: (t, kind) => joinOperation(t.baseURL, kind),
  headers: (t, json) => bearerHeaders(t.apiKey, json),
  dialect: () => OPENAI_DIALECT,
});
