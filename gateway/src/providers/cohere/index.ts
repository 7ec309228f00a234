/** Cohere adapter (API v2): chat, vision and completion (as one user turn) with tools and streaming; embeddings. */
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
import { cohereStatusError } from './errors.ts';
import { buildCohereChatBody, buildCohereEmbedBody, cohereHeaders, cohereUrl } from './request.ts';
import { parseCohereChat, parseCohereEmbedding } from './response.ts';
import { CohereStreamMapper } from './stream.ts';

const KINDS = requestKinds('cohere', ['chat', 'completion', 'embedding']);

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
        url: cohereUrl(target, 'chat'),
        headers: cohereHeaders(target),
        body: buildCohereChatBody(req, target.model, true),
        signal: ctx.signal,
        trace: ctx.trace,
      };
    },
    cohereStatusError,
    new CohereStreamMapper(),
  );
}

export const cohereAdapter: ProviderAdapter = {
  type: 'cohere',
  supportsNativeStructuredOutput: true,
  supports: KINDS.supports,

  async call(target: UpstreamTarget, req: CanonicalRequest, ctx: CallContext): Promise<CanonicalResult> {
    KINDS.check(req.kind);
    if (req.kind === 'embedding') {
      const res = await send({
        target,
        url: cohereUrl(target, 'embed'),
        headers: cohereHeaders(target),
        body: buildCohereEmbedBody(req, target.model),
        signal: ctx.signal,
        trace: ctx.trace,
      });
      if (res.status < 200 || res.status >= 300) throw await cohereStatusError(res);
      return parseCohereEmbedding(await readJson(res), req, target.model);
    }
    if (req.kind !== 'chat' && req.kind !== 'completion') throw unsupported(`cohere: ${req.kind}`);
    const res = await send({
      target,
      url: cohereUrl(target, 'chat'),
      headers: cohereHeaders(target),
      body: buildCohereChatBody(req, target.model, false),
      signal: ctx.signal,
      trace: ctx.trace,
    });
    if (res.status < 200 || res.status >= 300) throw await cohereStatusError(res);
    const chat = parseCohereChat(await readJson(res), target.model);
    return req.kind === 'completion' ? chatToCompletion(chat) : chat;
  },

  stream: (target, req, ctx) => streamImpl(target, req, ctx),
};
