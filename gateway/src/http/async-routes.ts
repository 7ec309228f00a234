import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AsyncService } from '../async/service.ts';
import { GatewayError } from '../errors/index.ts';
import { LIMITS } from '../requests/limits.ts';
import { nativeBody } from '../requests/native-schema.ts';
import { parseBody } from '../requests/zod-error.ts';
import { authOf, exchangeOf } from './context.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const callbackBody = z.object({
  data: z.record(z.string(), z.unknown()),
  task_id: z.string().max(256).optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
});

/** A host[:port] as it may appear in a URL: a name, an IPv4 address or a bracketed IPv6 address. */
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/**
 * `{base_url}` of the public URLs the gateway hands out (websocket_url, callback_url): the
 * configured SWITCHYARD_PUBLIC_URL, else the scheme and host the request came in on. Fastify reads
 * X-Forwarded-Proto and X-Forwarded-Host only from SWITCHYARD_TRUSTED_PROXIES (its trustProxy), so
 * a client cannot make the gateway advertise a host of its choosing through them.
 */
export function baseUrlOf(req: FastifyRequest, publicUrl: string | undefined): string {
  if (publicUrl) return publicUrl;
  const host = HOST.test(req.host) ? req.host : 'localhost';
  return `${req.protocol === 'https' ? 'https' : 'http'}://${host}`;
}

function channelParam(req: FastifyRequest): string {
  const id = (req.params as { channel_id?: string }).channel_id ?? '';
  if (!UUID.test(id)) throw new GatewayError('not_found', `Channel ${id} does not exist in this project.`);
  return id.toLowerCase();
}

/**
 * POST /ai/async (accept: 202 or the same refusals as a sync request), GET /ai/async/{channel_id}
 * (state and result, for clients without a socket), POST /callback/{channel_id} (the backend of a
 * pipeline workflow). Channels of another project are 404: they do not exist for this key.
 */
export function asyncRoutes(app: FastifyInstance, service: AsyncService): void {
  app.post(
    '/ai/async',
    { config: { surface: 'native', scope: 'ai' }, bodyLimit: LIMITS.nativeBodyBytes },
    async (req: FastifyRequest, reply: FastifyReply) => {
      const body = parseBody(nativeBody, req.body);
      if (body.stream)
        throw new GatewayError('invalid_request', 'Async requests do not stream.', { param: 'stream' });
      const channelId = randomUUID();
      const ack = await service.accept(
        exchangeOf(req, reply, 'native', 'accept'),
        body,
        baseUrlOf(req, service.publicUrl),
        channelId,
      );
      req.logAs = { channelId };
      return reply.code(202).send(ack);
    },
  );

  // Polls are reads, like the request-log API: kept out of the request log (no surface).
  app.get('/ai/async/:channel_id', { config: { scope: 'ai' } }, async (req) => {
    const channelId = channelParam(req);
    const rec = await service.get(authOf(req).project.config.id, channelId);
    if (!rec) throw new GatewayError('not_found', `Channel ${channelId} does not exist in this project.`);
    const d = rec.doc;
    return {
      channel_id: d.channel_id,
      status: rec.state,
      workflow: d.workflow,
      event_name: d.event_name,
      session_id: d.session_id,
      created_at: new Date(d.created_at).toISOString(),
      updated_at: new Date(d.updated_at).toISOString(),
      callback_deadline: d.deadline_at === null ? null : new Date(d.deadline_at).toISOString(),
      result: d.result,
    };
  });

  app.post('/callback/:channel_id', { config: { surface: 'native', scope: 'ai' } }, async (req) => {
    const channelId = channelParam(req);
    req.logAs = { type: 'callback', channelId };
    const body = parseBody(callbackBody, req.body);
    return service.callback(authOf(req).project.config.id, channelId, body, req.trace?.context);
  });
}
