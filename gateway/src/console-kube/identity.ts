import { z } from 'zod';
import { type KubeClient, KubeError } from '#operator/kube/index';
import { GatewayError } from '../errors/index.ts';

/**
 * Who a Kubernetes bearer token belongs to (TokenReview) and what the cluster's RBAC lets that
 * identity do with Switchyard resources (SubjectAccessReview). Both reviews are made with the
 * gateway's own ServiceAccount; the token itself is never stored, only the identity it names.
 */

export const kubeIdentity = z.object({
  username: z.string().min(1),
  uid: z.string().optional(),
  groups: z.array(z.string()).default([]),
  extra: z.record(z.string(), z.array(z.string())).optional(),
});
export type KubeIdentity = z.infer<typeof kubeIdentity>;

const tokenReviewAnswer = z.object({
  status: z
    .object({
      authenticated: z.boolean().optional(),
      user: kubeIdentity.partial({ username: true }).optional(),
      error: z.string().optional(),
    })
    .default({}),
});

const accessReviewAnswer = z.object({
  status: z
    .object({ allowed: z.boolean().default(false), reason: z.string().optional() })
    .default({ allowed: false }),
});

/** The Switchyard resources the console checks access to; all in the switchyard.dev group. */
export type SwitchyardResource = 'workflows' | 'apikeys' | 'projects';
export type Verb = 'get' | 'list' | 'patch' | 'create';

const unavailable = (err: unknown) =>
  new GatewayError(
    'service_unavailable',
    err instanceof KubeError && err.status === 403
      ? "The gateway's ServiceAccount may not review tokens or access (tokenreviews, subjectaccessreviews)."
      : 'The Kubernetes API server did not answer; retry shortly.',
    {
      ...(err instanceof KubeError && err.status === 403
        ? { hint: 'Install the chart with console.enabled (it binds the console identity role).' }
        : {}),
      retryAfterSeconds: 1,
      cause: err,
    },
  );

/** The identity behind a bearer token (service account or the cluster's OIDC); 401 when the API server rejects it. */
export async function reviewToken(client: KubeClient, token: string): Promise<KubeIdentity> {
  let raw: unknown;
  try {
    raw = await client.request('POST', '/apis/authentication.k8s.io/v1/tokenreviews', {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
    });
  } catch (err) {
    throw unavailable(err);
  }
  const status = tokenReviewAnswer.parse(raw).status;
  if (!status.authenticated || !status.user?.username)
    throw new GatewayError('invalid_api_key', 'The Kubernetes API server did not accept this token.', {
      hint: 'Sign in with a token the cluster issues (kubectl create token <service-account>, or your OIDC id token).',
    });
  return kubeIdentity.parse(status.user);
}

export interface AccessQuery {
  verb: Verb;
  resource: SwitchyardResource;
  namespace: string;
  name?: string | undefined;
}

/** Whether the cluster's RBAC (or any authorizer it runs) allows the identity this. */
export async function mayAccess(client: KubeClient, who: KubeIdentity, q: AccessQuery): Promise<boolean> {
  let raw: unknown;
  try {
    raw = await client.request('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: who.username,
          groups: who.groups,
          ...(who.uid ? { uid: who.uid } : {}),
          ...(who.extra ? { extra: who.extra } : {}),
          resourceAttributes: {
            group: 'switchyard.dev',
            resource: q.resource,
            verb: q.verb,
            namespace: q.namespace,
            ...(q.name ? { name: q.name } : {}),
          },
        },
      },
    });
  } catch (err) {
    throw unavailable(err);
  }
  return accessReviewAnswer.parse(raw).status.allowed;
}

/**
 * Throws unless the identity may do this. A project the identity may not read is 404 (as the key
 * console answers: which projects exist is not told); a write it may not make on a project it can
 * read is 403 naming the verb and resource, so the user knows which RoleBinding to ask for.
 */
export async function requireAccess(
  client: KubeClient,
  who: KubeIdentity,
  q: AccessQuery,
  projectId: string,
): Promise<void> {
  if (await mayAccess(client, who, q)) return;
  if (q.verb !== 'patch' && q.verb !== 'create')
    throw new GatewayError('not_found', `Project "${projectId}" not found.`);
  throw new GatewayError(
    'insufficient_permission',
    `${who.username} may not ${q.verb} ${q.resource}.switchyard.dev in namespace ${q.namespace}.`,
    { hint: `Ask for a Role with the ${q.verb} verb on this resource in that namespace.` },
  );
}
