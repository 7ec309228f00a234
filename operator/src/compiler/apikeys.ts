import { hashApiKey, type SnapshotApiKey } from '#contract';
import {
  generatedKeySecretName,
  PREVIOUS_KEY_FIELD,
  PREVIOUS_VALID_UNTIL_FIELD,
} from '../keys/secret-fields.ts';
import { type ApiKey, KEY_PREFIX, MIN_KEY_LENGTH } from '../resources/apikey.ts';
import type { SecretIndex } from './secrets.ts';
import { olderFirst } from './types.ts';
import type { Verdicts } from './verdicts.ts';

// The compile pass only reads generated keys; writing them is the key step's job (keys/).
export { generatedKeySecretName, PREVIOUS_KEY_FIELD, PREVIOUS_VALID_UNTIL_FIELD };

export const isWellFormedKey = (key: string): boolean =>
  key.startsWith(KEY_PREFIX) && key.length >= MIN_KEY_LENGTH && /^[A-Za-z0-9_]+$/.test(key);

export function compileApiKeys(
  keys: readonly ApiKey[],
  projectIds: Map<string, string>,
  secrets: SecretIndex,
  now: Date,
  verdicts: Verdicts,
): Record<string, SnapshotApiKey> {
  const out: Record<string, SnapshotApiKey> = {};
  const owners = new Map<string, string>();
  const idOf = (k: ApiKey): string => `${k.metadata.namespace}/${k.metadata.name}`;
  const sorted = [...keys].sort((a, b) => olderFirst(a, b, idOf(a).localeCompare(idOf(b))));
  for (const k of sorted) {
    const ns = k.metadata.namespace;
    const keyId = `${ns}/${k.metadata.name}`;
    const projectId = projectIds.get(`${ns}/${k.spec.projectRef.name}`);
    if (!projectId) {
      verdicts.fail(k, 'ProjectNotFound', `Project "${k.spec.projectRef.name}" not found in namespace ${ns}`);
      continue;
    }
    if (k.spec.revoked) {
      verdicts.fail(k, 'KeyRevoked', 'the key is revoked');
      continue;
    }
    if (k.spec.expiresAt !== undefined) {
      const expires = Date.parse(k.spec.expiresAt);
      // An unreadable expiry fails closed: the API server checks the format, embedded mode does not.
      if (!Number.isFinite(expires)) {
        const why = `expiresAt "${k.spec.expiresAt}" is not an RFC 3339 time; the key is refused`;
        verdicts.fail(k, 'KeyExpired', why);
        continue;
      }
      if (expires <= now.getTime()) {
        verdicts.fail(k, 'KeyExpired', `the key expired at ${k.spec.expiresAt}`);
        continue;
      }
    }
    const ref = k.spec.secretRef ?? { name: generatedKeySecretName(k.metadata.name), key: 'apiKey' };
    const found = secrets.lookup(ns, ref);
    if (!found.ok) {
      if (!k.spec.secretRef && found.reason === 'SecretMissing')
        verdicts.fail(k, 'KeyPending', `waiting for the operator to generate Secret "${ref.name}"`);
      else verdicts.fail(k, found.reason, found.message);
      continue;
    }
    if (!isWellFormedKey(found.value)) {
      verdicts.fail(
        k,
        'KeyMalformed',
        `Secret "${ref.name}" key "${ref.key}" must start with ${KEY_PREFIX}, be at least ${MIN_KEY_LENGTH} characters and hold only letters, digits and _`,
      );
      continue;
    }
    const hash = hashApiKey(found.value);
    const holder = owners.get(hash);
    if (holder) {
      verdicts.fail(k, 'DuplicateKey', `the same key is already used by ApiKey ${holder}`);
      continue;
    }
    owners.set(hash, keyId);
    const entry: SnapshotApiKey = {
      projectId,
      keyId,
      scopes: [...new Set(k.spec.scopes)].sort(),
      ...(k.spec.expiresAt ? { notAfter: new Date(k.spec.expiresAt).toISOString() } : {}),
      ...(k.spec.rateLimit ? { rateLimit: k.spec.rateLimit } : {}),
      ...(k.spec.toolGrants ? { toolGrants: [...new Set(k.spec.toolGrants)].sort() } : {}),
    };
    out[hash] = entry;
    // A rotated-out key keeps working until its grace period ends (never past the key's own expiry).
    const secret = secrets.get(ns, ref.name);
    const previous = secret?.data[PREVIOUS_KEY_FIELD]?.trim();
    const until = Date.parse(secret?.data[PREVIOUS_VALID_UNTIL_FIELD] ?? '');
    if (previous && isWellFormedKey(previous) && Number.isFinite(until) && until > now.getTime()) {
      const prevHash = hashApiKey(previous);
      if (!owners.has(prevHash)) {
        const cap = entry.notAfter ? Math.min(until, Date.parse(entry.notAfter)) : until;
        out[prevHash] = { ...entry, notAfter: new Date(cap).toISOString() };
        owners.set(prevHash, keyId);
      }
    }
    verdicts.ok(k, `key ${found.value.slice(0, 12)}… is active`, {
      keyPrefix: found.value.slice(0, 12),
      projectId,
    });
  }
  return out;
}
