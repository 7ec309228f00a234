import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AuthContext } from '../auth/authenticate.ts';
import { conversationNotFound, DAY_MS, guarded } from '../conversations/turn.ts';
import type { ConversationItem, ConversationObject, ConversationStore } from '../conversations/types.ts';
import { GatewayError } from '../errors/index.ts';
import { conversationItems } from '../requests/conversation-items.ts';
import {
  conversationParams,
  createConversationBody,
  createItemsBody,
  includeQuery,
  itemParams,
  listItemsQuery,
  updateConversationBody,
} from '../requests/conversations-schema.ts';
import { paramRules, refuseParams } from '../requests/param-rules.ts';
import { newId } from '../requests/responses-translate.ts';
import { parseBody } from '../requests/zod-error.ts';
import { compatibleAuth } from './compatible-switch.ts';

const CREATE_PARAMS = paramRules(createConversationBody.shape);
const UPDATE_PARAMS = paramRules(updateConversationBody.shape);
const ITEMS_PARAMS = paramRules(createItemsBody.shape);

const itemNotFound = (id: string): GatewayError =>
  new GatewayError('conversation_not_found', `Item with id "${id}" not found.`, { param: 'item_id' });

const retention = (auth: AuthContext): number => auth.project.config.storedResponses.retentionDays * DAY_MS;

const list = (data: ConversationItem[], hasMore: boolean) => ({
  object: 'list' as const,
  data,
  first_id: data[0]?.id ?? null,
  last_id: data[data.length - 1]?.id ?? null,
  has_more: hasMore,
});

/**
 * The Conversations API (OpenAI's shapes): conversations and their items, kept in the runtime state
 * under the caller's project with its stored-responses retention. Like the stored-response reads,
 * these are not requests to a workflow: no request-log entry. POST /v1/responses with `conversation`
 * appends to them (responses-routes.ts).
 */
export function conversationsRoutes(app: FastifyInstance, store: ConversationStore, now: () => number): void {
  const config = { scope: 'ai' } as const;
  const found = async (auth: AuthContext, id: string): Promise<ConversationObject> => {
    const conv = await guarded(store.get(auth.project.config.id, id));
    if (!conv) throw conversationNotFound(id);
    return conv;
  };
  const idOf = (req: FastifyRequest): string => parseBody(conversationParams, req.params).conversation_id;

  app.post('/conversations', { config }, async (req) => {
    const auth = compatibleAuth(req);
    const raw = req.body ?? {};
    refuseParams(raw, CREATE_PARAMS);
    const body = parseBody(createConversationBody, raw);
    const items = body.items?.length ? conversationItems(body.items, 'items') : [];
    const conv: ConversationObject = {
      id: newId('conv'),
      object: 'conversation',
      created_at: Math.floor(now() / 1000),
      metadata: body.metadata ?? {},
    };
    await guarded(store.create(auth.project.config.id, conv, items, retention(auth)));
    return conv;
  });

  app.get('/conversations/:conversation_id', { config }, async (req) =>
    found(compatibleAuth(req), idOf(req)),
  );

  app.post('/conversations/:conversation_id', { config }, async (req) => {
    const auth = compatibleAuth(req);
    const id = idOf(req);
    refuseParams(req.body, UPDATE_PARAMS);
    const body = parseBody(updateConversationBody, req.body ?? {});
    const conv = { ...(await found(auth, id)), metadata: body.metadata ?? {} };
    if (!(await guarded(store.update(auth.project.config.id, conv, retention(auth)))))
      throw conversationNotFound(id);
    return conv;
  });

  app.delete('/conversations/:conversation_id', { config }, async (req) => {
    const auth = compatibleAuth(req);
    const id = idOf(req);
    if (!(await guarded(store.delete(auth.project.config.id, id)))) throw conversationNotFound(id);
    return { id, object: 'conversation.deleted', deleted: true };
  });

  app.get('/conversations/:conversation_id/items', { config }, async (req) => {
    const auth = compatibleAuth(req);
    const id = idOf(req);
    const q = parseBody(listItemsQuery, req.query ?? {});
    const all = await guarded(store.items(auth.project.config.id, id));
    if (!all) throw conversationNotFound(id);
    let items = q.order === 'desc' ? all.reverse() : all;
    if (q.after) {
      const at = items.findIndex((i) => i.id === q.after);
      if (at < 0)
        throw new GatewayError('invalid_request', `No item with id "${q.after}" in this conversation.`, {
          param: 'after',
        });
      items = items.slice(at + 1);
    }
    return list(items.slice(0, q.limit), items.length > q.limit);
  });

  app.post('/conversations/:conversation_id/items', { config }, async (req) => {
    const auth = compatibleAuth(req);
    const id = idOf(req);
    parseBody(includeQuery, req.query ?? {});
    refuseParams(req.body, ITEMS_PARAMS);
    const body = parseBody(createItemsBody, req.body ?? {});
    const items = conversationItems(body.items, 'items');
    if (!(await guarded(store.append(auth.project.config.id, id, items, retention(auth)))))
      throw conversationNotFound(id);
    return list(items, false);
  });

  app.get('/conversations/:conversation_id/items/:item_id', { config }, async (req) => {
    const auth = compatibleAuth(req);
    const { conversation_id: id, item_id: itemId } = parseBody(itemParams, req.params);
    parseBody(includeQuery, req.query ?? {});
    const items = await guarded(store.items(auth.project.config.id, id));
    if (!items) throw conversationNotFound(id);
    const item = items.find((i) => i.id === itemId);
    if (!item) throw itemNotFound(itemId);
    return item;
  });

  app.delete('/conversations/:conversation_id/items/:item_id', { config }, async (req) => {
    const auth = compatibleAuth(req);
    const { conversation_id: id, item_id: itemId } = parseBody(itemParams, req.params);
    const outcome = await guarded(store.deleteItem(auth.project.config.id, id, itemId));
    if (outcome === 'no_conversation') throw conversationNotFound(id);
    if (outcome === 'no_item') throw itemNotFound(itemId);
    return found(auth, id);
  });
}
