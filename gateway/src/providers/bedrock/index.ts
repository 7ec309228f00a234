/**
 * Amazon Bedrock adapter: chat, vision and completion through Converse / ConverseStream, embeddings
 * and images through InvokeModel; every request SigV4-signed with the provider's AWS credentials.
 */
import { unsupported } from '../../upstream/errors.ts';
import { readJson, type SendOptions, send, type UpstreamResponse } from '../../upstream/http.ts';
import { chatToCompletion, requestKinds, runStream } from '../common.ts';
import type {
  CallContext,
  CanonicalRequest,
  CanonicalResult,
  ChatRequest,
  CompletionRequest,
  EmbeddingRequest,
  ProviderAdapter,
  StreamEvent,
  UpstreamTarget,
} from '../types.ts';
import { bedrockStatusError } from './errors.ts';
import { eventStreamParser, loadEventStreams } from './eventstream.ts';
import {
  type BedrockOp,
  bedrockUrl,
  buildConverseBody,
  buildEmbeddingBodies,
  buildImageBody,
  cachePointsOf,
  embeddingFamily,
} from './request.ts';
import { embeddingResult, parseConverse, parseEmbeddingAnswer, parseImages } from './response.ts';
import { loadSigner, signedHeaders } from './sign.ts';
import { ConverseStreamMapper } from './stream.ts';

const KINDS = requestKinds('bedrock', ['chat', 'completion', 'embedding', 'image']);

async function signed(
  target: UpstreamTarget,
  op: BedrockOp,
  body: string,
  ctx: CallContext,
  accept: string,
): Promise<SendOptions> {
  const url = bedrockUrl(target, op);
  const headers = await signedHeaders(
    target,
    url,
    body,
    { 'content-type': 'application/json', accept },
    ctx.signal,
  );
  return { target, url, headers, body, signal: ctx.signal, trace: ctx.trace };
}

async function invoke(target: UpstreamTarget, body: string, ctx: CallContext): Promise<UpstreamResponse> {
  const res = await send(await signed(target, 'invoke', body, ctx, 'application/json'));
  if (res.status < 200 || res.status >= 300) throw await bedrockStatusError(res);
  return res;
}

/** Titan embeds one text per call: a few calls at a time keep a long list from taking N round trips. */
const EMBED_CONCURRENCY = 4;

async function embed(target: UpstreamTarget, req: EmbeddingRequest, ctx: CallContext) {
  const family = embeddingFamily(target.model);
  const bodies = buildEmbeddingBodies(target.model, req);
  const answers: ReturnType<typeof parseEmbeddingAnswer>[] = new Array(bodies.length);
  let next = 0;
  const worker = async () => {
    while (next < bodies.length) {
      const i = next++;
      const res = await invoke(target, bodies[i] as string, ctx);
      answers[i] = parseEmbeddingAnswer(await readJson(res), family, res.headers);
    }
  };
  await Promise.all(Array.from({ length: Math.min(EMBED_CONCURRENCY, bodies.length) }, worker));
  return embeddingResult(answers, req, target.model);
}

async function* streamImpl(
  target: UpstreamTarget,
  req: ChatRequest | CompletionRequest,
  ctx: CallContext,
): AsyncGenerator<StreamEvent> {
  KINDS.check(req.kind);
  const body = buildConverseBody(req, cachePointsOf(target.model));
  yield* runStream(
    () => signed(target, 'converse-stream', body, ctx, 'application/vnd.amazon.eventstream'),
    bedrockStatusError,
    new ConverseStreamMapper(),
    await eventStreamParser(),
  );
}

export const bedrockAdapter: ProviderAdapter = {
  type: 'bedrock',
  // No JSON-schema mode common to Bedrock's models: the schema is an instruction, the gateway validates.
  supportsNativeStructuredOutput: false,
  supports: KINDS.supports,

  async warm(): Promise<void> {
    await Promise.all([loadSigner(), loadEventStreams()]);
  },

  async call(target: UpstreamTarget, req: CanonicalRequest, ctx: CallContext): Promise<CanonicalResult> {
    KINDS.check(req.kind);
    switch (req.kind) {
      case 'embedding':
        return embed(target, req, ctx);
      case 'image': {
        const res = await invoke(target, buildImageBody(target.model, req), ctx);
        return parseImages(await readJson(res), req);
      }
      case 'chat':
      case 'completion': {
        const res = await send(
          await signed(
            target,
            'converse',
            buildConverseBody(req, cachePointsOf(target.model)),
            ctx,
            'application/json',
          ),
        );
        if (res.status < 200 || res.status >= 300) throw await bedrockStatusError(res);
        const chat = parseConverse(await readJson(res), target.model, res.headers);
        return req.kind === 'completion' ? chatToCompletion(chat) : chat;
      }
      default:
        throw unsupported(`bedrock: ${req.kind}`);
    }
  },

  stream: (target, req, ctx) => streamImpl(target, req, ctx),
};
