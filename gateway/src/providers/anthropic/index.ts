/**
 * Anthropic Messages API adapter: chat and completion (as a single user turn), with streaming and
 * tools. A native Messages request (dialect `anthropic-messages`) is sent as the client wrote it
 * (native.ts) and its answer and stream events travel back as Anthropic sent them.
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
import { anthropicStatusError } from './errors.ts';
import { isNativeMessages } from './native.ts';
import { anthropicHeaders, anthropicUrl, buildAnthropicBody } from './request.ts';
import { parseAnthropicMessage } from './response.ts';
import { AnthropicStreamMapper } from './stream.ts';

const KINDS = requestKinds('anthropic', ['chat', 'completion']);

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
        url: anthropicUrl(target),
        headers: anthropicHeaders(target, req),
        body: buildAnthropicBody(target, req, true),
        signal: ctx.signal,
        trace: ctx.trace,
      };
    },
    anthropicStatusError,
    new AnthropicStreamMapper(isNativeMessages(req)),
  );
}

export const anthropicAdapter: ProviderAdapter = {
  type: 'anthropic',
  // No JSON-schema mode: the schema is put in the system prompt and the gateway validates the answer.
  supportsNativeStructuredOutput: false,
  supports: KINDS.supports,
  speaks: (dialect) => dialect === 'anthropic-messages',

  async call(target: UpstreamTarget, req: CanonicalRequest, ctx: CallContext): Promise<CanonicalResult> {
    KINDS.check(req.kind);
    if (req.kind !== 'chat' && req.kind !== 'completion') throw unsupported(`anthropic: ${req.kind}`);
    const res = await send({
      target,
      url: anthropicUrl(target),
      headers: anthropicHeaders(target, req),
      body: buildAnthropicBody(target, req, false),
      signal: ctx.signal,
      trace: ctx.trace,
    });
    if (res.status < 200 || res.status >= 300) throw await anthropicStatusError(res);
    const chat = parseAnthropicMessage(await readJson(res), target.model, isNativeMessages(req));
    return req.kind === 'completion' ? chatToCompletion(chat) : chat;
  },

  stream: (target, req, ctx) => streamImpl(target, req, ctx),
};
