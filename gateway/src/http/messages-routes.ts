import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { randomHex } from '../domain/ids.ts';
import { messageObject } from '../encoders/encode-messages.ts';
import { writeMessagesStream } from '../encoders/messages-sse.ts';
import { resultOrUpstreamError } from '../encoders/result-or-upstream-error.ts';
import type { Pipeline } from '../pipeline/run.ts';
import type { ChatMessage, ChatRequest } from '../providers/types.ts';
import { LIMITS } from '../requests/limits.ts';
import { promptMessages } from '../requests/messages-prompt.ts';
import { countTokensBody, messagesBody } from '../requests/messages-schema.ts';
import {
  checkMessagesBreakpoints,
  messagesRequest,
  rejectCountTokensParams,
  rejectMessagesParams,
} from '../requests/messages-translate.ts';
import { parseBody } from '../requests/zod-error.ts';
import { countMessageTokens, exactMessageTokens } from '../tokens/count.ts';
import { compatibleAuth, modelWorkflow } from './compatible-switch.ts';
import { serve } from './context.ts';

const CHAT_TYPES = ['chat', 'vision'] as const;

const messageId = (): string => `msg_${randomHex(16)}`;

/**
 * POST /v1/messages and /v1/messages/count_tokens (Anthropic's Messages API): parse
 * (requests/messages-*), run the one pipeline, encode (encoders/encode-messages.ts). `model` is the
 * workflow name. The request also travels as sent (a NativeRequest), which slots that speak the
 * Messages API receive with what the workflow adds, and whose answer comes back as they sent it.
 * `anthropic-version` is accepted and not needed; some `anthropic-beta` features are forwarded.
 */
export function messagesRoutes(app: FastifyInstance, pipeline: Pipeline): void {
  const create = async (req: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    compatibleAuth(req);
    rejectMessagesParams(req.body);
    const body = parseBody(messagesBody, req.body);
    const translated = messagesRequest(body, req.body as Record<string, unknown>, req.headers);
    const { ex, result: outcome } = await serve(pipeline, req, reply, 'messages', {
      body: translated.body,
      stream: body.stream === true,
      compat: { allowed: CHAT_TYPES },
      native: translated.native,
    });
    const id = messageId();
    const stops = (outcome.prepared.request as ChatRequest).stop;
    if (outcome.kind === 'streaming') {
      // message_start carries the prompt's size before the provider reports it.
      const estimate = countMessageTokens(
        (translated.body.messages ?? []) as readonly ChatMessage[],
        'anthropic',
      );
      return writeMessagesStream(reply, ex, outcome, { id, model: body.model, stops }, estimate);
    }
    const result = resultOrUpstreamError(reply, ex, outcome);
    if (result.kind !== 'chat') throw new Error(`unexpected ${result.kind} result for a message`);
    return reply.send(messageObject({ id, model: body.model, stops }, result));
  };

  const countTokens = async (req: FastifyRequest): Promise<unknown> => {
    const auth = compatibleAuth(req);
    rejectCountTokensParams(req.body);
    const body = parseBody(countTokensBody, req.body);
    checkMessagesBreakpoints(body);
    const wf = modelWorkflow(auth, body.model);
    const slot = wf.slots[0]!;
    const type = auth.project.providers.get(slot.provider)?.config.type ?? 'anthropic';
    const system = wf.config.systemInstructions;
    const messages = [
      ...(system ? [{ role: 'system' as const, content: system }] : []),
      ...promptMessages(body),
    ];
    const toolText = JSON.stringify(body.tools ?? []);
    return {
      input_tokens:
        (await exactMessageTokens(messages, type)) +
        (body.tools?.length ? Math.ceil(toolText.length / 4) : 0),
    };
  };

  const config = { surface: 'messages', scope: 'ai' } as const;
  app.post('/messages', { config, bodyLimit: LIMITS.chatBodyBytes }, create);
  app.post('/messages/count_tokens', { config, bodyLimit: LIMITS.chatBodyBytes }, countTokens);
}
