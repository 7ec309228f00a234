import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { BackgroundResponses } from '../background/service.ts';
import { lockConversation } from '../conversations/lock.ts';
import {
  continuedConversation,
  conversationIdOf,
  conversationNotFound,
  guarded,
  oneContinuation,
} from '../conversations/turn.ts';
import type { ConversationItem, ConversationStore } from '../conversations/types.ts';
import { answeredResponse, type ResponseEcho } from '../encoders/encode-responses.ts';
import { writeResponsesStream } from '../encoders/responses-sse.ts';
import { resultOrUpstreamError } from '../encoders/result-or-upstream-error.ts';
import { GatewayError } from '../errors/index.ts';
import { maskStored } from '../guardrails/values.ts';
import type { Pipeline } from '../pipeline/run.ts';
import { LIMITS } from '../requests/limits.ts';
import { inputItemsQuery, responseIdParams, responsesBody } from '../requests/responses-schema.ts';
import { newId, rejectResponsesParams, responsesToNative } from '../requests/responses-translate.ts';
import { parseBody } from '../requests/zod-error.ts';
import { assistantTurn, conversationOf } from '../stored-responses/record.ts';
import type { StoredResponse, StoredResponseStore } from '../stored-responses/types.ts';
import { backgroundRoutes, readQuery } from './background-routes.ts';
import { compatibleAuth } from './compatible-switch.ts';
import { exchangeOf, serve } from './context.ts';

const DAY_MS = 86_400_000;
/** Names the hosted tools a workflow's policy left out of the request, so omitting is never silent. */
export const OMITTED_TOOLS_HEADER = 'x-service-omitted-tools';
const CHAT_TYPES = ['chat', 'vision'] as const;

const notFound = (id: string, param?: string): GatewayError =>
  new GatewayError('response_not_found', `Response with id "${id}" not found.`, { param });

const unavailable = (err: unknown): GatewayError =>
  new GatewayError('service_unavailable', 'Stored responses are unavailable right now.', {
    retryAfterSeconds: 1,
    cause: err,
  });

/**
 * POST /v1/responses and the stored-response reads. The route parses (requests/responses-*),
 * continues a stored conversation, runs the one pipeline and encodes (encoders/encode-responses*);
 * a stored response is durable before its answer is sent, so any gateway process can continue it.
 */
export function responsesRoutes(
  app: FastifyInstance,
  pipeline: Pipeline,
  store: StoredResponseStore,
  now: () => number,
  conversations: ConversationStore,
  background: BackgroundResponses,
): void {
  const create = async (req: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const auth = compatibleAuth(req);
    rejectResponsesParams(req.body);
    const body = parseBody(responsesBody, req.body);
    const projectId = auth.project.config.id;
    oneContinuation(body);
    // One turn at a time per conversation, from reading its items until this answer has gone out.
    if (body.conversation && !body.background) {
      const unlock = await lockConversation(conversations, projectId, conversationIdOf(body.conversation));
      // A client gone while it waited: its turn is not taken.
      if (reply.raw.closed) {
        await unlock();
        return reply;
      }
      reply.raw.once('close', () => void unlock());
    }
    const conversation = body.conversation
      ? await continuedConversation(conversations, projectId, body.conversation)
      : undefined;
    let previous: StoredResponse | undefined;
    if (body.previous_response_id) {
      previous = await store.get(projectId, body.previous_response_id).catch((err: unknown) => {
        throw unavailable(err);
      });
      if (!previous) throw notFound(body.previous_response_id, 'previous_response_id');
    }
    const turn = responsesToNative(
      body,
      conversation?.history ?? (previous && !previous.sessionId ? conversationOf(previous) : []),
      previous?.sessionId,
      auth.project.workflows.get(body.model)?.config.hostedTools,
    );
    if (turn.omittedTools.length > 0) {
      // On the raw response, so a stream's headers (written there directly) carry it too.
      reply.raw.setHeader(OMITTED_TOOLS_HEADER, turn.omittedTools.join(','));
      req.logDetails = { ...req.logDetails, omitted_tools: turn.omittedTools };
    }
    const echo: ResponseEcho = {
      id: newId('resp'),
      createdAt: Math.floor(now() / 1000),
      model: body.model,
      body,
      toolNames: turn.toolNames,
    };
    let sessionId: string | undefined;
    // What is kept in the client's words is masked by the project's guardrails, like the request.
    const mask = <T>(value: T): T => maskStored(auth.project, body.model, auth.key.keyId, value);
    const retentionMs = auth.project.config.storedResponses.retentionDays * DAY_MS;
    if (body.background) {
      const queued = await background.accept({
        ex: exchangeOf(req, reply, 'responses', 'accept'),
        body,
        turn,
        echo,
        history: conversation?.history ?? (previous && !previous.sessionId ? conversationOf(previous) : []),
        sessionId: previous?.sessionId,
        conversationId: conversation?.id,
        retentionMs,
      });
      req.logAs = { channelId: echo.id };
      if (body.stream) return background.follow(reply, projectId, echo.id, -1);
      return reply.send(queued);
    }
    // The turn joins its conversation before the answer goes out, so any process continues from it.
    const appended = async (response: Record<string, unknown>): Promise<void> => {
      if (!conversation) return;
      const output = (Array.isArray(response.output) ? response.output : []) as ConversationItem[];
      const items = mask([...(turn.items as ConversationItem[]), ...output]);
      if (!(await guarded(conversations.append(projectId, conversation.id, items, retentionMs))))
        throw conversationNotFound(conversation.id, 'conversation');
    };
    const stored = async (response: Record<string, unknown>, responseJson?: string): Promise<void> => {
      await appended(response);
      if (body.store === false) return;
      const record: StoredResponse = mask({
        id: echo.id,
        workflow: body.model,
        response,
        items: turn.items,
        conversation: [
          ...turn.conversation,
          assistantTurn(response.output, turn.toolNames),
        ] as unknown as Record<string, unknown>[],
        ...(sessionId ? { sessionId } : {}),
      });
      // The answer's JSON is stored as is only when masking left the response untouched.
      const json = record.response === response ? responseJson : undefined;
      await store.put(projectId, record, retentionMs, json);
    };
    const { ex, result: outcome } = await serve(pipeline, req, reply, 'responses', {
      body: turn.native,
      stream: body.stream === true,
      compat: { allowed: CHAT_TYPES },
    });
    sessionId = outcome.notes.sessionId;
    if (outcome.kind === 'streaming') return writeResponsesStream(reply, ex, outcome, echo, stored);
    const result = resultOrUpstreamError(reply, ex, outcome);
    if (result.kind !== 'chat') throw new Error(`unexpected ${result.kind} result for a response`);
    const response = answeredResponse(echo, result);
    // Serialized once, for the answer and the stored record alike.
    const json = JSON.stringify(response);
    await stored(response, json).catch((err: unknown) => {
      throw err instanceof GatewayError ? err : unavailable(err);
    });
    return reply.type('application/json; charset=utf-8').send(json);
  };

  const stored = async (req: FastifyRequest): Promise<StoredResponse> => {
    const auth = compatibleAuth(req);
    const { id } = parseBody(responseIdParams, req.params);
    const found = await store.get(auth.project.config.id, id).catch((err: unknown) => {
      throw unavailable(err);
    });
    if (!found) throw notFound(id);
    return found;
  };

  app.post(
    '/responses',
    { config: { surface: 'responses', scope: 'ai' }, bodyLimit: LIMITS.chatBodyBytes },
    create,
  );
  // Reads are not requests to a workflow: no request-log entry, like GET /v1/sessions/{id}.
  app.get('/responses/:id', { config: { scope: 'ai' } }, async (req, reply) => {
    const q = readQuery(req.query);
    const record = await stored(req);
    if (q.stream !== 'true') return record.response;
    return background.stream(reply, compatibleAuth(req).project.config.id, record, q.starting_after ?? -1);
  });
  backgroundRoutes(app, stored, background);
  app.delete('/responses/:id', { config: { scope: 'ai' } }, async (req) => {
    const auth = compatibleAuth(req);
    const { id } = parseBody(responseIdParams, req.params);
    const deleted = await store.delete(auth.project.config.id, id).catch((err: unknown) => {
      throw unavailable(err);
    });
    if (!deleted) throw notFound(id);
    return { id, object: 'response', deleted: true };
  });
  app.get('/responses/:id/input_items', { config: { scope: 'ai' } }, async (req) => {
    const record = await stored(req);
    const q = parseBody(inputItemsQuery, req.query ?? {});
    let items = q.order === 'desc' ? [...record.items].reverse() : record.items;
    if (q.after) items = items.slice(items.findIndex((i) => i.id === q.after) + 1);
    if (q.before) {
      const at = items.findIndex((i) => i.id === q.before);
      if (at >= 0) items = items.slice(0, at);
    }
    const page = items.slice(0, q.limit);
    return {
      object: 'list',
      data: page,
      first_id: page[0]?.id ?? null,
      last_id: page[page.length - 1]?.id ?? null,
      has_more: items.length > page.length,
    };
  });
}
