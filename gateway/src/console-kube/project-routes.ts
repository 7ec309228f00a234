import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { isNotFound, type KubeClient, type KubeObject } from '#operator/kube/index';
import type { ConsoleProject } from '../console/backend.ts';
import { WorkflowRefusedError } from '../console/backend.ts';
import { GatewayError } from '../errors/index.ts';
import { invalidRequest } from '../requests/zod-error.ts';
import { API_VERSION, applySpec, FIELD_MANAGER, logWrite, ownersOf } from './apply.ts';
import { requireAccess } from './identity.ts';
import type { KubeSessions } from './sessions.ts';

/**
 * A Project's webhook endpoints, edited under the same rule as workflows: a SubjectAccessReview for
 * the identity (get, patch on projects), then a non-forced server-side apply of `spec.webhooks`
 * alone, so every other Project field stays whoever's it is. The list is atomic in the Project
 * schema: whoever applied it last owns all of it, and a GitOps-owned list yields a hand-off.
 */
const endpoints = z
  .object({
    webhooks: z
      .array(
        z
          .object({
            url: z.string(),
            secretRef: z.object({ name: z.string(), key: z.string().optional() }).strict(),
            events: z.array(z.string()).optional(),
          })
          .strict(),
      )
      .max(10),
  })
  .strict();

const projects = (ns: string) => `/apis/${API_VERSION}/namespaces/${encodeURIComponent(ns)}/projects`;

export function projectWebhookRoutes(
  app: FastifyInstance,
  o: { client: KubeClient; sessions: KubeSessions; projectFor: (id: string) => ConsoleProject },
): void {
  const { client, sessions } = o;
  const path = '/api/cluster/projects/:project_id/webhooks';
  type Params = { project_id: string };

  const read = async (p: ConsoleProject): Promise<KubeObject> => {
    try {
      return await client.request<KubeObject>(
        'GET',
        `${projects(p.namespace)}/${encodeURIComponent(p.name)}`,
      );
    } catch (err) {
      if (isNotFound(err)) throw new GatewayError('not_found', `Project "${p.id}" not found.`);
      throw new GatewayError(
        'service_unavailable',
        'The Kubernetes API server did not answer; retry shortly.',
        {
          retryAfterSeconds: 1,
          cause: err,
        },
      );
    }
  };
  const view = (p: ConsoleProject, x: KubeObject) => {
    const spec = (x.spec ?? {}) as Record<string, unknown>;
    return {
      object: 'project_webhooks',
      project_id: p.id,
      webhooks: Array.isArray(spec.webhooks) ? spec.webhooks : [],
      owners: ownersOf(x).filter((w) => w.fields.includes('webhooks')),
    };
  };

  app.get<{ Params: Params }>(path, async (req) => {
    const { identity } = await sessions.current(req);
    const p = o.projectFor(req.params.project_id);
    await requireAccess(
      client,
      identity,
      { verb: 'get', resource: 'projects', namespace: p.namespace, name: p.name },
      p.id,
    );
    return view(p, await read(p));
  });

  app.put<{ Params: Params }>(path, async (req, reply) => {
    const { identity } = await sessions.current(req);
    const p = o.projectFor(req.params.project_id);
    await requireAccess(
      client,
      identity,
      { verb: 'get', resource: 'projects', namespace: p.namespace, name: p.name },
      p.id,
    );
    const parsed = endpoints.safeParse(req.body ?? {});
    if (!parsed.success) throw invalidRequest(parsed.error);
    await requireAccess(
      client,
      identity,
      { verb: 'patch', resource: 'projects', namespace: p.namespace, name: p.name },
      p.id,
    );
    const current = await read(p);
    const target = {
      collection: projects(p.namespace),
      kind: 'Project',
      namespace: p.namespace,
      name: p.name,
      current,
    };
    const result = await applySpec(client, target, { webhooks: parsed.data.webhooks }, true).catch(
      (err: unknown) => {
        if (!(err instanceof WorkflowRefusedError)) throw err;
        throw new GatewayError('invalid_request', `${err.reason}: ${err.message}`, {
          ...(err.specPath ? { param: err.specPath } : {}),
          hint: 'Nothing was changed; fix the endpoint and send the list again.',
        });
      },
    );
    logWrite(req.log, identity.username, target, result);
    if (!result.applied) {
      void reply.code(409);
      return { object: 'project_hand_off', ...result };
    }
    return { ...view(p, result.object), applied: true, field_manager: FIELD_MANAGER };
  });
}
