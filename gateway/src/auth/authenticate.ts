import { type ApiKeyScope, hashApiKey } from '#contract';
import { BoundedMap } from '../domain/bounded-map.ts';
import { GatewayError } from '../errors/index.ts';
import type { Runtime, RuntimeKey, RuntimeProject } from '../snapshot/runtime.ts';

export interface AuthContext {
  key: RuntimeKey;
  keyHash: string;
  project: RuntimeProject;
}

const KEY_SHAPE = /^sy_live_[A-Za-z0-9_]{24,256}$/;
const BEARER = /^bearer[ \t]+/i;

/**
 * Digests of the keys this snapshot knows, by token: the SHA-256 of a key is ~4 µs a request, and
 * a client sends the same key every time. Only tokens the snapshot holds are kept (a guess never
 * enters, so the memo cannot be grown from outside and a miss costs what it did), per snapshot, so
 * a new snapshot forgets revoked keys.
 */
const digests = new WeakMap<Runtime, BoundedMap<string, string>>();
const MAX_DIGESTS = 10_000;

function digestOf(token: string, runtime: Runtime): string {
  let memo = digests.get(runtime);
  const known = memo?.get(token);
  if (known !== undefined) return known;
  const keyHash = hashApiKey(token);
  if (!runtime.keys.has(keyHash)) return keyHash;
  if (!memo) {
    memo = new BoundedMap(MAX_DIGESTS);
    digests.set(runtime, memo);
  }
  memo.set(token, keyHash);
  return keyHash;
}

/**
 * Bearer project keys. Keys are compared by SHA-256 digest through a Map: the secret itself is
 * never compared byte by byte, so response timing tells nothing about how much of a guess matched
 * (the digest memo above is a Map by token too: V8 compares strings whose hashes differ without
 * reading them, and it holds only keys the snapshot knows).
 */
export function authenticate(header: string | undefined, runtime: Runtime, now = Date.now()): AuthContext {
  if (!header)
    throw new GatewayError('missing_api_key', 'Missing API key.', {
      hint: 'Send the header "Authorization: Bearer sy_live_...".',
    });
  // The scheme is case-insensitive (RFC 9110 §11.1): Bearer, bearer and BEARER are the same.
  const scheme = BEARER.exec(header);
  if (!scheme)
    throw new GatewayError('invalid_api_key', 'The Authorization header must use the Bearer scheme.', {
      hint: 'Send the header "Authorization: Bearer sy_live_...".',
    });
  const token = header.slice(scheme[0].length).trim();
  if (!KEY_SHAPE.test(token))
    throw new GatewayError('invalid_api_key', 'Malformed API key.', {
      hint: 'Project API keys start with sy_live_.',
    });
  const keyHash = digestOf(token, runtime);
  const key = runtime.keys.get(keyHash);
  // Unknown, revoked and rotated-out keys are simply absent from the snapshot; expiry is checked
  // here as well because a snapshot can outlive the instant a key expires.
  if (!key || key.notAfterMs <= now)
    throw new GatewayError('invalid_api_key', 'Invalid, expired or revoked API key.');
  const project = runtime.projects.get(key.projectId);
  if (!project) throw new GatewayError('invalid_api_key', 'Invalid, expired or revoked API key.');
  return { key, keyHash, project };
}

/**
 * The credential of a request: the Authorization header, or on the Messages surface the key in
 * `x-api-key` (what the Anthropic SDK sends) read as a bearer key. Authorization wins when both are set.
 */
export function credentialOf(
  headers: { authorization?: string | undefined; 'x-api-key'?: string | string[] | undefined },
  takesXApiKey: boolean,
): string | undefined {
  if (headers.authorization || !takesXApiKey) return headers.authorization;
  const key = headers['x-api-key'];
  return typeof key === 'string' && key.length > 0 ? `Bearer ${key}` : undefined;
}

export function requireScope(auth: AuthContext, scope: ApiKeyScope): void {
  if (!auth.key.scopes.includes(scope))
    throw new GatewayError('insufficient_permission', `This API key lacks the "${scope}" scope.`, {
      hint: `Add "${scope}" to the ApiKey's spec.scopes.`,
    });
}
