import type { KubeObject } from '../kube/client.ts';
import { API_VERSION } from '../resources/common.ts';
import type { ApiKey } from '../resources/index.ts';
import { generateApiKey } from './generate.ts';
import { generatedKeySecretName, PREVIOUS_KEY_FIELD, PREVIOUS_VALID_UNTIL_FIELD } from './secret-fields.ts';

export const ROTATION_ANNOTATION = 'switchyard.dev/rotation-generation';
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'switchyard-operator';

export type KeySecretPlan =
  | { action: 'none'; why: string }
  | { action: 'create'; secret: KubeObject; event: string }
  | { action: 'update'; secret: KubeObject; event: string };

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
const unb64 = (s: string | undefined): string | undefined =>
  s === undefined ? undefined : Buffer.from(s, 'base64').toString('utf8');

const isOwnedBy = (secret: KubeObject, key: ApiKey): boolean =>
  (secret.metadata.ownerReferences ?? []).some(
    (r) => r.kind === 'ApiKey' && r.controller === true && (!key.metadata.uid || r.uid === key.metadata.uid),
  );

/**
 * Pure: what to do with the generated-key Secret of an ApiKey without secretRef. Creates it, fills
 * a missing key, rotates when spec.rotation.generation moved past the Secret's annotation (the old
 * key moves to previousApiKey, valid for gracePeriodSeconds), and drops a previous key whose grace
 * period is over. A Secret of that name the operator does not own is left alone.
 */
export function planKeySecret(
  key: ApiKey,
  secret: KubeObject | undefined,
  now: Date,
  generate: () => string = generateApiKey,
): KeySecretPlan {
  if (key.spec.secretRef) return { action: 'none', why: 'uses secretRef' };
  if (key.spec.revoked) return { action: 'none', why: 'revoked' };
  const name = generatedKeySecretName(key.metadata.name);
  const generation = key.spec.rotation?.generation ?? 0;
  const grace = key.spec.rotation?.gracePeriodSeconds ?? 86_400;
  if (!secret) {
    return {
      action: 'create',
      event: `generated a new API key into Secret ${name}`,
      secret: {
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'Opaque',
        metadata: {
          name,
          namespace: key.metadata.namespace,
          labels: { [MANAGED_BY_LABEL]: MANAGED_BY, 'switchyard.dev/apikey': key.metadata.name },
          annotations: { [ROTATION_ANNOTATION]: String(generation) },
          ...(key.metadata.uid
            ? {
                ownerReferences: [
                  {
                    apiVersion: API_VERSION,
                    kind: 'ApiKey',
                    name: key.metadata.name,
                    uid: key.metadata.uid,
                    controller: true,
                  },
                ],
              }
            : {}),
        },
        data: { apiKey: b64(generate()) },
      },
    };
  }
  if (!isOwnedBy(secret, key)) return { action: 'none', why: `Secret ${name} is not owned by this ApiKey` };
  const data = { ...((secret.data as Record<string, string> | undefined) ?? {}) };
  const current = unb64(data.apiKey)?.trim();
  const seenGeneration = Number(secret.metadata.annotations?.[ROTATION_ANNOTATION] ?? '0') || 0;
  const annotations = { ...(secret.metadata.annotations ?? {}), [ROTATION_ANNOTATION]: String(generation) };
  if (!current) {
    data.apiKey = b64(generate());
    return {
      action: 'update',
      event: `generated a new API key into Secret ${name}`,
      secret: { ...secret, metadata: { ...secret.metadata, annotations }, data },
    };
  }
  if (generation > seenGeneration) {
    const until = new Date(now.getTime() + grace * 1000);
    data.apiKey = b64(generate());
    if (grace > 0) {
      data[PREVIOUS_KEY_FIELD] = b64(current);
      data[PREVIOUS_VALID_UNTIL_FIELD] = b64(until.toISOString());
    } else {
      delete data[PREVIOUS_KEY_FIELD];
      delete data[PREVIOUS_VALID_UNTIL_FIELD];
    }
    return {
      action: 'update',
      event:
        grace > 0
          ? `rotated the key (generation ${generation}); the previous key works until ${until.toISOString()}`
          : `rotated the key (generation ${generation}); the previous key stopped at once`,
      secret: { ...secret, metadata: { ...secret.metadata, annotations }, data },
    };
  }
  const until = Date.parse(unb64(data[PREVIOUS_VALID_UNTIL_FIELD]) ?? '');
  if (data[PREVIOUS_KEY_FIELD] !== undefined && !(until > now.getTime())) {
    delete data[PREVIOUS_KEY_FIELD];
    delete data[PREVIOUS_VALID_UNTIL_FIELD];
    return {
      action: 'update',
      event: 'the grace period of the previous key ended',
      secret: { ...secret, data },
    };
  }
  return { action: 'none', why: 'up to date' };
}

/** Grace end of the previous key held in a generated Secret, if any and still ahead. */
export function previousValidUntil(secret: KubeObject | undefined, now: Date): string | undefined {
  const raw = unb64((secret?.data as Record<string, string> | undefined)?.[PREVIOUS_VALID_UNTIL_FIELD]);
  const t = Date.parse(raw ?? '');
  return Number.isFinite(t) && t > now.getTime() ? new Date(t).toISOString() : undefined;
}
