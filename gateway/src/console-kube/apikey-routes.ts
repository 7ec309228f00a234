import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { isNotFound, type KubeClient, type KubeObject } from '#operator/kube/index';
import type { ConsoleProject } from '../console/backend.ts';
import { WorkflowRefusedError } from '../console/backend.ts';
import { GatewayError } from '../errors/index.ts';
import { invalidRequest } from '../requests/zod-error.ts';
import {
  API_VERSION,
  type Applied,
  applySpec,
  FIELD_MANAGER,
  type HandOff,
  logWrite,
  ownersOf,
} from './apply.ts';
import { requireAccess } from './identity.ts';
import type { KubeSessions } from './sessions.ts';

/**
 * ApiKey resources for Kubernetes identities: create, revoke and rotate as non-forced server-side
 * applies (revoke sets spec.revoked alone, rotate spec.rotation.generation alone), checked by
 * SubjectAccessReview (list, patch on apikeys). Every applied configuration carries projectRef,
 * which the schema requires; applying the value it already has shares its ownership, no conflict. The operator generates each key into a Secret; the
 * gateway has no rights on Secrets, so the console names the Secret and never carries a key.
 */
const createBody = z
  .object({
    name: z.string().min(1).max(253),
    scopes: z.array(z.string()).optional(),
    expiresAt: z.string().optional(),
  })
  .strict();

const collection = (ns: string) => `/apis/${API_VERSION}/namespaces/${encodeURIComponent(ns)}/apikeys`;
const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const unavailable = (err: unknown): never => {
  if (err instanceof GatewayError) throw err;
  throw new GatewayError('service_unavailable', 'The Kubernetes API server did not answer; retry shortly.', {
    retryAfterSeconds: 1,
    cause: err,
  });
};

/** An ApiKey as the console shows it: never key material (the status holds a 12-character prefix at most). */
function keyView(x: KubeObject) {
  const spec = isRecord(x.spec) ? x.spec : {};
  const status = isRecord(x.status) ? x.status : {};
  const rotation = isRecord(spec.rotation) ? spec.rotation : {};
  return {
    object: 'api_key',
    name: x.metadata.name,
    scopes: Array.isArray(spec.scopes) ? spec.scopes : ['ai'],
    expires_at: spec.expiresAt ?? null,
    revoked: spec.revoked === true,
    rotation_generation: typeof rotation.generation === 'number' ? rotation.generation : 0,
    prefix: status.keyPrefix ?? null,
    secret_name: status.secretName ?? null,
    owners: ownersOf(x),
  };
}

export function apiKeyRoutes(
  app: FastifyInstance,
  o: { client: KubeClient; sessions: KubeSessions; projectFor: (id: string) => ConsoleProject },
): void {
  const { client, sessions } = o;
  const base = '/api/cluster/projects/:project_id/apikeys';
  type Params = { project_id: string; name?: string };

  const keysOf = async (p: ConsoleProject): Promise<KubeObject[]> => {
    const list = await client
      .request<{ items: KubeObject[] }>('GET', collection(p.namespace))
      .catch(unavailable);
    return list.items.filter(
      (x) => isRecord(x.spec) && isRecord(x.spec.projectRef) && x.spec.projectRef.name === p.name,
    );
  };
  const open = async (
    req: { params: Params },
    who: Parameters<typeof requireAccess>[1],
    verb: 'list' | 'patch',
  ) => {
    const p = o.projectFor(req.params.project_id);
    await requireAccess(client, who, { verb: 'list', resource: 'apikeys', namespace: p.namespace }, p.id);
    if (verb === 'patch')
      await requireAccess(
        client,
        who,
        {
          verb: 'patch',
          resource: 'apikeys',
          namespace: p.namespace,
          ...(req.params.name ? { name: req.params.name } : {}),
        },
        p.id,
      );
    return p;
  };
  const answer = (reply: { code(n: number): unknown }, result: Applied | HandOff, created = false) => {
    if (!result.applied) {
      reply.code(409);
      return { object: 'api_key_hand_off', ...result };
    }
    reply.code(created ? 201 : 200);
    return { ...keyView(result.object), applied: true, field_manager: FIELD_MANAGER };
  };
  const apply = (
    who: { log: { info(o: object): void }; user: string },
    p: ConsoleProject,
    name: string,
    current: KubeObject | undefined,
    spec: Record<string, unknown>,
    partial: boolean,
  ) =>
    applySpec(
      client,
      { collection: collection(p.namespace), kind: 'ApiKey', namespace: p.namespace, name, current },
      spec,
      partial,
    )
      .catch((err: unknown) => {
        if (!(err instanceof WorkflowRefusedError)) return unavailable(err);
        throw new GatewayError('invalid_request', `${err.reason}: ${err.message}`, {
          ...(err.specPath ? { param: err.specPath } : {}),
          hint: 'Nothing was changed.',
        });
      })
      .then((result) => {
        logWrite(who.log, who.user, { kind: 'ApiKey', namespace: p.namespace, name }, result);
        return result;
      });
  const existing = async (p: ConsoleProject, name: string) => {
    const x = (await keysOf(p)).find((k) => k.metadata.name === name);
    if (!x) throw new GatewayError('not_found', `API key "${name}" not found in project ${p.id}.`);
    return x;
  };

  app.get<{ Params: Params }>(base, async (req) => {
    const { identity } = await sessions.current(req);
    const p = await open(req, identity, 'list');
    return { object: 'list', data: (await keysOf(p)).map(keyView) };
  });

  app.post<{ Params: Params }>(base, async (req, reply) => {
    const { identity } = await sessions.current(req);
    const parsed = createBody.safeParse(req.body ?? {});
    if (!parsed.success) throw invalidRequest(parsed.error);
    const { name, ...rest } = parsed.data;
    const p = await open({ params: { ...req.params, name } }, identity, 'patch');
    await requireAccess(
      client,
      identity,
      { verb: 'create', resource: 'apikeys', namespace: p.namespace, name },
      p.id,
    );
    const taken = await client
      .request<KubeObject>('GET', `${collection(p.namespace)}/${encodeURIComponent(name)}`)
      .catch((err: unknown) => (isNotFound(err) ? undefined : unavailable(err)));
    if (taken)
      throw new GatewayError('conflict', `API key "${name}" already exists in namespace ${p.namespace}.`);
    return answer(
      reply,
      await apply(
        { log: req.log, user: identity.username },
        p,
        name,
        undefined,
        { projectRef: { name: p.name }, ...rest },
        false,
      ),
      true,
    );
  });

  app.post<{ Params: Params }>(`${base}/:name/revoke`, async (req, reply) => {
    const { identity } = await sessions.current(req);
    const p = await open(req, identity, 'patch');
    const x = await existing(p, req.params.name ?? '');
    return answer(
      reply,
      await apply(
        { log: req.log, user: identity.username },
        p,
        x.metadata.name,
        x,
        { projectRef: { name: p.name }, revoked: true },
        true,
      ),
    );
  });

  app.post<{ Params: Params }>(`${base}/:name/rotate`, async (req, reply) => {
    const { identity } = await sessions.current(req);
    const p = await open(req, identity, 'patch');
    const x = await existing(p, req.params.name ?? '');
    const generation = keyView(x).rotation_generation + 1;
    return answer(
      reply,
      await apply(
        { log: req.log, user: identity.username },
        p,
        x.metadata.name,
        x,
        { projectRef: { name: p.name }, rotation: { generation } },
        true,
      ),
    );
  });
}
