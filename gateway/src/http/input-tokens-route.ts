import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { continuedConversation, oneContinuation } from '../conversations/turn.ts';
import type { ConversationStore } from '../conversations/types.ts';
import { GatewayError } from '../errors/index.ts';
import type { ChatMessage } from '../providers/types.ts';
import { inputTokensBody } from '../requests/conversations-schema.ts';
import { LIMITS } from '../requests/limits.ts';
import { paramRules, refuseParams } from '../requests/param-rules.ts';
import type { ResponsesBody } from '../requests/responses-schema.ts';
import { responsesToNative } from '../requests/responses-translate.ts';
import { parseBody } from '../requests/zod-error.ts';
import { conversationOf } from '../stored-responses/record.ts';
import type { StoredResponseStore } from '../stored-responses/types.ts';
import { exactMessageTokens } from '../tokens/count.ts';
import { compatibleAuth, modelWorkflow } from './compatible-switch.ts';

const PARAMS = paramRules(inputTokensBody.shape);

/**
 * POST /v1/responses/input_tokens: the input tokens of a Responses request as the workflow's primary
 * slot would bill them: the workflow's system instructions, the conversation it continues
 * (`previous_response_id` or `conversation`), the instructions, the input and the tools. No provider
 * is called: it is the gateway's count (o200k_base for OpenAI-family slots, the character estimate
 * for the others), and the `x-service-token-count: estimate` header says so.
 */
export function inputTokensRoute(
  app: FastifyInstance,
  responses: StoredResponseStore,
  conversations: ConversationStore,
): void {
  const count = async (req: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const auth = compatibleAuth(req);
    refuseParams(req.body, PARAMS);
    const body = parseBody(inputTokensBody, req.body ?? {});
    oneContinuation(body);
    const projectId = auth.project.config.id;
    const wf = modelWorkflow(auth, body.model);
    let history: ChatMessage[] = [];
    if (body.conversation)
      history = (await continuedConversation(conversations, projectId, body.conversation)).history;
    else if (body.previous_response_id) {
      const previous = await responses.get(projectId, body.previous_response_id).catch((err: unknown) => {
        throw new GatewayError('service_unavailable', 'Stored responses are unavailable right now.', {
          retryAfterSeconds: 1,
          cause: err,
        });
      });
      if (!previous)
        throw new GatewayError(
          'response_not_found',
          `Response with id "${body.previous_response_id}" not found.`,
          { param: 'previous_response_id' },
        );
      history = conversationOf(previous);
    }
    const prompt: ChatMessage[] =
      body.input == null || (Array.isArray(body.input) && body.input.length === 0)
        ? [
            ...(body.instructions ? [{ role: 'system' as const, content: body.instructions }] : []),
            ...history,
          ]
        : (responsesToNative({ ...body, input: body.input } as ResponsesBody, history, undefined).native
            .messages as ChatMessage[]);
    const system = wf.config.systemInstructions;
    const messages = [...(system ? [{ role: 'system' as const, content: system }] : []), ...prompt];
    const slot = wf.slots[0]!;
    const type = auth.project.providers.get(slot.provider)?.config.type ?? 'openai';
    const toolText = body.tools?.length ? JSON.stringify(body.tools) : '';
    const inputTokens = (await exactMessageTokens(messages, type)) + Math.ceil(toolText.length / 4);
    reply.header('x-service-token-count', 'estimate');
    return { object: 'response.input_tokens', input_tokens: inputTokens };
  };
  app.post('/responses/input_tokens', { config: { scope: 'ai' }, bodyLimit: LIMITS.chatBodyBytes }, count);
}
