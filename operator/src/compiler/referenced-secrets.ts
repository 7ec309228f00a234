import { generatedKeySecretName } from '../keys/secret-fields.ts';
import type { SwitchyardObject } from '../resources/index.ts';

/** `<namespace>/<name>` of every Secret the objects read: the only Secrets a compile is handed. */
export function referencedSecretIds(objects: readonly SwitchyardObject[]): Set<string> {
  const wanted = new Set<string>();
  for (const o of objects) {
    const ns = o.metadata.namespace;
    if (o.kind === 'Provider') {
      const c = o.spec.credentials;
      const name = c?.secretRef?.name ?? c?.awsAccessKeys?.name;
      if (name) wanted.add(`${ns}/${name}`);
    }
    if (o.kind === 'Project') for (const w of o.spec.webhooks ?? []) wanted.add(`${ns}/${w.secretRef.name}`);
    if (o.kind === 'ApiKey')
      wanted.add(`${ns}/${o.spec.secretRef?.name ?? generatedKeySecretName(o.metadata.name)}`);
    if (o.kind === 'MCPServer') {
      const c = o.spec.credentials;
      const name = c?.bearer?.secretRef.name ?? c?.header?.secretRef.name;
      if (name) wanted.add(`${ns}/${name}`);
    }
  }
  return wanted;
}
