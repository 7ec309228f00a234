/**
 * The credential object of each provider that is not authenticated by a fixed API key. Kept across
 * snapshots while the provider's credential is unchanged, so a new snapshot does not throw away
 * tokens that are still good.
 */
import { createHash } from 'node:crypto';
import type { SnapshotProvider } from '#contract';
import { BoundedMap } from '../../domain/bounded-map.ts';
import type { UpstreamAuth } from '../types.ts';
import { staticAwsAuth, webIdentityAuth } from './aws.ts';
import { serviceAccountAuth, workloadIdentityAuth } from './gcp.ts';

const cache = new BoundedMap<string, UpstreamAuth>(1000);

function build(p: SnapshotProvider, secret: string): UpstreamAuth | undefined {
  const auth = p.auth;
  switch (auth.method) {
    case 'api-key':
      return undefined;
    case 'aws-access-keys':
      return staticAwsAuth(secret);
    case 'aws-web-identity':
      return webIdentityAuth(auth, p.timeouts);
    case 'gcp-service-account':
      return serviceAccountAuth(auth, secret, p.timeouts);
    case 'gcp-workload-identity':
      return workloadIdentityAuth(auth, p.timeouts);
  }
}

/** `scope` names the provider (`<namespace>/<name>`); `secret` is its unsealed credential ('' if none). */
export function authFor(scope: string, p: SnapshotProvider, secret: string): UpstreamAuth | undefined {
  if (p.auth.method === 'api-key') return undefined;
  const key = createHash('sha256')
    .update(`${scope}\0${JSON.stringify(p.auth)}\0${JSON.stringify(p.timeouts)}\0${secret}`)
    .digest('base64');
  let found = cache.get(key);
  if (found === undefined) {
    found = build(p, secret);
    if (found === undefined) return undefined;
    cache.set(key, found);
  }
  return found;
}
