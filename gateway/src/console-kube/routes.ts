import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { KubeClient, KubeObject } from '#operator/kube/index';
import { projectOf, WorkflowRefusedError } from '../console/backend.ts';
import { bodyField, readWorkflowBody } from '../console/body.ts';
import { apiNameOf, projectRefOf, toRecord } from '../console/kube-backend.ts';
import { objectNameFor } from '../console/names.ts';
import { workflowView } from '../console/view.ts';
import { basePathOf } from '../console-web/sessions.ts';
import { GatewayError } from '../errors/index.ts';
import { invalidRequest } from '../requests/zod-error.ts';
import { apiKeyRoutes } from './apikey-routes.ts';
import { API_VERSION, applySpec, FIELD_MANAGER, logWrite, manifestOf, ownersOf } from './apply.ts';
import { type AccessQuery, type KubeIdentity, mayAccess, requireAccess, reviewToken } from './identity.ts';
import { projectWebhookRoutes } from './project-routes.ts';
import { KUBE_SESSION_COOKIE, type KubeSessions, setKubeCookie } from './sessions.ts';

export interface KubeConsoleRoutesOptions {
  /** The gateway's own client: it makes the reviews and, once they allow it, the reads and writes. */
  client: KubeClient;
  sessions: KubeSessions;
  /** Project ids (`<namespace>.<name>`) the gateway serves now (its snapshot). */
  projects: () => Iterable<string>;
  basePath?: string | undefined;
}

/** The API server failed or is busy: 503 with a retry hint, never the raw client error. */
const unavailable = (err: unknown): never => {
  if (err instanceof GatewayError) throw err;
  throw new GatewayError('service_unavailable', 'The Kubernetes API server did not answer; retry shortly.', {
    retryAfterSeconds: 1,
    cause: err,
  });
};

type Params = { project_id: string; name?: string };
const signIn = z.object({ token: z.string().min(1).max(16_384) }).strict();
const collection = (ns: string) => `/apis/${API_VERSION}/namespaces/${encodeURIComponent(ns)}/workflows`;

/**
 * The console for Kubernetes identities, under /console/api/cluster/: sign-in with a bearer token
 * (TokenReview), then every read and write checked by SubjectAccessReview on workflows in the
 * project's namespace (list for the project list, get for a workflow, patch for a write), so the
 * cluster's RBAC decides. Writes are server-side applies by ./apply.ts.
 */
export function kubeConsoleRoutes(app: FastifyInstance, o: KubeConsoleRoutesOptions): void {
  const { client, sessions } = o;
  const base = '/api/cluster/projects/:project_id/workflows';

  const projectFor = (id: string) => {
    for (const p of o.projects()) if (p === id) return projectOf(id);
    throw new GatewayError('not_found', `Project "${id}" not found.`);
  };
  const guard = async (who: KubeIdentity, id: string, q: Omit<AccessQuery, 'namespace' | 'resource'>) => {
    const project = projectFor(id);
    await requireAccess(client, who, { ...q, resource: 'workflows', namespace: project.namespace }, id);
    return project;
  };
  const objectsOf = async (ns: string, project: string): Promise<KubeObject[]> => {
    const list = await client.request<{ items: KubeObject[] }>('GET', collection(ns)).catch(unavailable);
    return list.items.filter((x) => projectRefOf(x) === project);
  };
  const detail = (id: string, x: KubeObject) => ({
    ...workflowView(id, toRecord(x)),
    owners: ownersOf(x),
    yaml: manifestOf(
      {
        collection: '',
        kind: 'Workflow',
        namespace: x.metadata.namespace ?? '',
        name: x.metadata.name,
        current: x,
      },
      (x.spec ?? {}) as Record<string, unknown>,
    ),
  });

  const answerSession = (who: KubeIdentity, csrf: string) => ({
    object: 'console_cluster_session',
    username: who.username,
    groups: who.groups,
    csrf_token: csrf,
  });

  projectWebhookRoutes(app, { client, sessions, projectFor });
  apiKeyRoutes(app, { client, sessions, projectFor });

  app.post('/api/cluster/session', async (req, reply) => {
    await sessions.attempt(req.ip);
    const parsed = signIn.safeParse(req.body ?? {});
    if (!parsed.success) throw invalidRequest(parsed.error);
    const who = await reviewToken(client, parsed.data.token);
    const s = await sessions.start(who);
    setKubeCookie(req, reply, basePathOf(req, o.basePath), s.cookie, s.maxAgeS);
    void reply.header('cache-control', 'no-store');
    return answerSession(who, s.csrf);
  });

  app.get('/api/cluster/session', async (req, reply) => {
    const s = await sessions.current(req);
    void reply.header('cache-control', 'no-store');
    return answerSession(s.identity, s.csrf);
  });

  app.delete('/api/cluster/session', async (req, reply) => {
    await sessions.end(req);
    void reply.header(
      'set-cookie',
      `${KUBE_SESSION_COOKIE}=; Path=${basePathOf(req, o.basePath)}/; Max-Age=0; HttpOnly; SameSite=Strict`,
    );
    return reply.code(204).send();
  });

  app.get('/api/cluster/projects', async (req) => {
    const { identity } = await sessions.current(req);
    const ids = [...new Set(o.projects())].sort();
    // One review per namespace, not per project: several projects often share one.
    const namespaces = [...new Set(ids.map((id) => projectOf(id).namespace))];
    const verdicts = new Map(
      await Promise.all(
        namespaces.map(async (ns) => {
          const [read, write] = await Promise.all([
            mayAccess(client, identity, { verb: 'list', resource: 'workflows', namespace: ns }),
            mayAccess(client, identity, { verb: 'patch', resource: 'workflows', namespace: ns }),
          ]);
          return [ns, { read, write }] as const;
        }),
      ),
    );
    const data = ids
      .map((id) => ({ ...projectOf(id), access: verdicts.get(projectOf(id).namespace)! }))
      .filter((p) => p.access.read)
      .map((p) => ({
        object: 'project',
        id: p.id,
        namespace: p.namespace,
        name: p.name,
        can_edit: p.access.write,
      }));
    return { object: 'list', data };
  });

  app.get<{ Params: Params }>(base, async (req) => {
    const { identity } = await sessions.current(req);
    const p = await guard(identity, req.params.project_id, { verb: 'list' });
    const objects = await objectsOf(p.namespace, p.name);
    return {
      object: 'list',
      data: objects
        .sort((a, b) => apiNameOf(a).localeCompare(apiNameOf(b)))
        .map((x) => ({ ...workflowView(p.id, toRecord(x)), owners: ownersOf(x) })),
    };
  });

  app.get<{ Params: Params }>(`${base}/:name`, async (req) => {
    const { identity } = await sessions.current(req);
    const p = await guard(identity, req.params.project_id, { verb: 'get' });
    const x = (await objectsOf(p.namespace, p.name)).find((w) => apiNameOf(w) === req.params.name);
    if (!x)
      throw new GatewayError(
        'workflow_not_found',
        `Workflow "${req.params.name}" not found in project ${p.id}.`,
      );
    return detail(p.id, x);
  });

  // Create or edit, one verb: a server-side apply makes the object as the form describes it.
  app.put<{ Params: Params }>(`${base}/:name`, async (req: FastifyRequest<{ Params: Params }>, reply) => {
    const { identity } = await sessions.current(req);
    const p = await guard(identity, req.params.project_id, { verb: 'get' });
    const body = readWorkflowBody(req.body, req.params.name ?? '');
    const current = (await objectsOf(p.namespace, p.name)).find((w) => apiNameOf(w) === body.name);
    const name = current?.metadata.name ?? objectNameFor(p.name, body.name);
    // A server-side apply that creates needs create as well as patch, for the user as for the API server.
    for (const verb of current ? (['patch'] as const) : (['patch', 'create'] as const))
      await requireAccess(
        client,
        identity,
        { verb, resource: 'workflows', namespace: p.namespace, name },
        p.id,
      );
    const spec = { projectRef: { name: p.name }, ...body.spec };
    const result = await applySpec(
      client,
      { collection: collection(p.namespace), kind: 'Workflow', namespace: p.namespace, name, current },
      spec,
    ).catch((err: unknown) => {
      if (!(err instanceof WorkflowRefusedError)) return unavailable(err);
      const param = err.specPath === undefined ? undefined : bodyField(err.specPath, body.flatBackups);
      throw new GatewayError('invalid_workflow', `${err.reason}: ${err.message}`, {
        param,
        hint: 'Nothing was changed; fix the field and send the workflow again.',
      });
    });
    logWrite(req.log, identity.username, { kind: 'Workflow', namespace: p.namespace, name }, result);
    if (!result.applied) {
      void reply.code(409);
      return { object: 'workflow_hand_off', ...result };
    }
    void reply.code(current ? 200 : 201);
    return { ...detail(p.id, result.object), applied: true, field_manager: FIELD_MANAGER };
  });
}
